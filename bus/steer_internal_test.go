package bus

import "testing"

// An answer is bound to the pause as it was shown: a console's signed
// answer to a pause sent under a real pause's id with other content (a
// harmless-looking call) is no answer to the real one; to the same pause,
// asked again with the same bytes, it is.
func TestAnswerIsBoundToThePauseShown(t *testing.T) {
	signer, err := LoadOrMakeSigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	steer := Steerers{signer.Public()}
	real := []byte(`{"id":"p1","tool_call":{"name":"run_shell","args":{"command":"rm -rf ~"}}}`)
	forged := []byte(`{"id":"p1","tool_call":{"name":"calculator","args":{"expression":"1+1"}}}`)
	answer := []byte(`{"action":"proceed"}`)
	shownForged := signer.sign(gateKind, "s", gateNonce("p1", forged), answer)
	if err := steer.check(gateKind, "s", gateNonce("p1", real), shownForged); err == nil {
		t.Error("an answer to the forged pause was taken at the real one")
	}
	shownReal := signer.sign(gateKind, "s", gateNonce("p1", real), answer)
	if err := steer.check(gateKind, "s", gateNonce("p1", real), shownReal); err != nil {
		t.Errorf("the answer to the pause shown: %v", err)
	}
	if err := steer.check(askKind, "s", gateNonce("p1", real), shownReal); err == nil {
		t.Error("a pause's answer was taken as a question's")
	}
}

// An answer's signature covers its bytes: the submitter's console signs
// every reply, {"again":true} too, and the submit role reads the replies
// on the bus (_INBOX.>); that signature under other bytes (a proceed) is
// refused.
func TestSignatureCoversTheAnswer(t *testing.T) {
	signer, err := LoadOrMakeSigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	steer := Steerers{signer.Public()}
	nonce := gateNonce("p1", []byte(`{"id":"p1"}`))
	again := signer.sign(gateKind, "s", nonce, []byte(`{"again":true}`))
	if err := steer.check(gateKind, "s", nonce, again); err != nil {
		t.Fatalf("the console's own reply: %v", err)
	}
	forged := signer.sign(gateKind, "s", nonce, []byte(`{"action":"proceed"}`))
	forged.Header = again.Header
	if err := steer.check(gateKind, "s", nonce, forged); err == nil {
		t.Error("a proceed under the signature of an again was taken")
	}
}
