package sessions

// Opener is a Backend that locks and reads a session in one go, asking
// once what Lock, ReadJournal and ReadMeta would each ask again (the
// JetStream journal, where each question is a round trip). OpenWriter uses
// it when the backend has it.
type Opener interface {
	Open(id string) (w Writer, journal []byte, m Meta, ok bool, err error)
}

// lockAndLoad makes the caller session id's writer and loads it.
func (s *Store) lockAndLoad(id string) (Writer, *Loaded, error) {
	if o, ok := s.b.(Opener); ok {
		w, raw, m, mok, err := o.Open(id)
		if err != nil {
			return nil, nil, err
		}
		l, err := s.loaded(id, raw, m, mok)
		if err != nil {
			w.Close()
		}
		return w, l, err
	}
	w, err := s.b.Lock(id, false)
	if err != nil {
		return nil, nil, err
	}
	l, err := s.Load(id)
	if err != nil {
		w.Close()
	}
	return w, l, err
}
