package bus

// Steering: who may answer a run's pauses and questions. Everyone on the
// bus with the submit user may read a pause, but only the person who
// submitted the run (and the operator) may answer it. Each data folder
// has a steering key (an Ed25519 key pair in KeyFile, made on first use);
// a submitted run carries its submitter's public key (RunRequest.Steer),
// and a worker's gate and its questions take only an answer signed with
// that key or the operator's (OperatorKey in the config bucket, put there
// by agentty serve). The signature covers the session, the pause's (or
// the question's) random nonce, for a pause a hash of the pause as shown
// (gateNonce), and the answer's bytes, so an answer seen on the bus cannot
// be replayed at another pause, given for a pause forged under a real
// one's id, or altered.

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// KeyFile is the name of the steering key's file in a data folder.
const KeyFile = "steer.key"

// sigHeader is the header an answer's signature travels in.
const sigHeader = "Agentty-Steer-Sig"

// Signer signs the answers of one data folder's consoles.
type Signer struct{ key ed25519.PrivateKey }

// LoadOrMakeSigner reads dir's steering key, or makes it (0600, in a
// folder made 0700).
func LoadOrMakeSigner(dir string) (*Signer, error) {
	path := filepath.Join(dir, KeyFile)
	s, err := LoadSigner(dir)
	if !errors.Is(err, os.ErrNotExist) {
		return s, err
	}
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) { // another process made it first
		return LoadSigner(dir)
	}
	if err != nil {
		return nil, err
	}
	_, err = f.Write([]byte(base64.RawURLEncoding.EncodeToString(key.Seed()) + "\n"))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("the steering key %s: %w", path, err)
	}
	return &Signer{key: key}, nil
}

// LoadSigner reads dir's steering key; an error wrapping os.ErrNotExist
// when there is none. The key is refused, with the fix, when it is not a
// regular file of the user's that no one else may read (readSecret).
func LoadSigner(dir string) (*Signer, error) {
	path := filepath.Join(dir, KeyFile)
	b, err := readSecret("the steering key", path, 256)
	if err != nil {
		return nil, err
	}
	seed, err := base64.RawURLEncoding.DecodeString(string(trimSpace(b)))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("the steering key %s is not one agentty made: remove it to make a new one (the runs submitted with it can then be steered only by the operator)", path)
	}
	return &Signer{key: ed25519.NewKeyFromSeed(seed)}, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

// Public is the key that checks s's signatures, as RunRequest.Steer has it.
func (s *Signer) Public() string {
	return base64.RawURLEncoding.EncodeToString(s.key.Public().(ed25519.PublicKey))
}

// signed is what a signature covers: what it answers (a gate's pause or a
// question), the session, the nonce and the answer's bytes.
func signed(kind, session, nonce string, data []byte) []byte {
	msg := make([]byte, 0, len(kind)+len(session)+len(nonce)+len(data)+24)
	msg = append(msg, "agentty steer v1\x00"...)
	msg = append(msg, kind...)
	msg = append(msg, 0)
	msg = append(msg, session...)
	msg = append(msg, 0)
	msg = append(msg, nonce...)
	msg = append(msg, 0)
	return append(msg, data...)
}

// sign returns data as a message whose header holds s's signature; a nil
// s leaves it unsigned.
func (s *Signer) sign(kind, session, nonce string, data []byte) *nats.Msg {
	m := &nats.Msg{Data: data, Header: nats.Header{}}
	if s != nil {
		sig := ed25519.Sign(s.key, signed(kind, session, nonce, data))
		m.Header.Set(sigHeader, base64.RawURLEncoding.EncodeToString(sig))
	}
	return m
}

// Steerers are the public keys whose signatures a run takes: its
// submitter's and the operator's. Empty, it takes any answer (a run of
// this process, or a test's).
type Steerers []string

// may says whether s lists the key of signer.
func (s Steerers) may(signer *Signer) bool {
	return signer != nil && slices.Contains(s, signer.Public())
}

// check says whether m is signed by one of s for kind, session and nonce;
// nil when it is, or when s is empty.
func (s Steerers) check(kind, session, nonce string, m *nats.Msg) error {
	if len(s) == 0 {
		return nil
	}
	sig, err := base64.RawURLEncoding.DecodeString(m.Header.Get(sigHeader))
	if err != nil || len(sig) != ed25519.SignatureSize {
		return errors.New("not signed by whoever may steer this session")
	}
	msg := signed(kind, session, nonce, m.Data)
	for _, k := range s {
		pub, err := base64.RawURLEncoding.DecodeString(k)
		if err == nil && len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, msg, sig) {
			return nil
		}
	}
	return errors.New("signed by a key that may not steer this session")
}

// ConfigBucket is the KV bucket of the fleet's settings that only the
// operator may write: OperatorKey, the operator's steering key.
const ConfigBucket = "AGENTTY_CONFIG"

// OperatorKey is the key of ConfigBucket that holds the operator's public
// steering key.
const OperatorKey = "operator-steer"

// OperatorSteerer returns the operator's public steering key, "" when
// none was put (a cluster agentty serve did not set up).
func OperatorSteerer(ctx context.Context, nc *nats.Conn) (string, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, ConfigBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	e, err := kv.Get(ctx, OperatorKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return string(e.Value()), nil
}
