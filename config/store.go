package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// TrustStore is the person's record of trusted folders, trusted.json beside
// their config file.
type TrustStore struct {
	path    string                   // the file; Where says it
	Version int                      `json:"version"`
	Folders map[string]TrustedFolder `json:"folders"`
}

// TrustedFolder is one trusted folder: the SHA-256 of its .agentty.json when
// it was trusted (empty when it had none), and the risky keys it had then,
// each with the SHA-256 of its value, to say what changed.
type TrustedFolder struct {
	SHA256    string            `json:"sha256"`
	TrustedAt time.Time         `json:"trusted_at"`
	Keys      map[string]string `json:"keys,omitempty"`
}

// TrustPath is trusted.json in the folder of the user's config file.
func TrustPath(getenv func(string) string) string {
	return filepath.Join(filepath.Dir(Path(getenv)), "trusted.json")
}

// LoadTrust reads the person's trust file (an absent one trusts nothing).
func LoadTrust(getenv func(string) string) (*TrustStore, error) {
	return LoadTrustFile(TrustPath(getenv))
}

// LoadTrustFile reads the trust file at path.
func LoadTrustFile(path string) (*TrustStore, error) {
	t := &TrustStore{path: path, Version: 1, Folders: map[string]TrustedFolder{}}
	b, err := os.ReadFile(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trust: %w", err)
	}
	if err := json.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("trust: %s: %v (fix or remove the file; it lists the folders you trusted)", t.path, err)
	}
	if t.Folders == nil {
		t.Folders = map[string]TrustedFolder{}
	}
	return t, nil
}

// Holds reports whether the person trusted w's folder with this very file.
func (t *TrustStore) Holds(w *Workspace) bool {
	f, ok := t.Folders[w.Dir]
	return ok && f.SHA256 == w.Sum
}

// Changes says how w's risky keys differ from when its folder was trusted;
// nil when it never was.
func (t *TrustStore) Changes(w *Workspace) []string {
	f, ok := t.Folders[w.Dir]
	if !ok {
		return nil
	}
	var out []string
	now := valueSums(w.Risky)
	for _, k := range slices.Sorted(maps.Keys(now)) {
		switch old, had := f.Keys[k]; {
		case !had:
			out = append(out, "added "+k)
		case old != now[k]:
			out = append(out, "changed "+k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(f.Keys)) {
		if _, has := now[k]; !has {
			out = append(out, "removed "+k)
		}
	}
	if len(out) == 0 {
		out = append(out, "no risky key changed")
	}
	return out
}

func valueSums(risky map[string]string) map[string]string {
	out := make(map[string]string, len(risky))
	for k, v := range risky {
		s := sha256.Sum256([]byte(v))
		out[k] = hex.EncodeToString(s[:8])
	}
	return out
}

// Trust records dir, with w its current config (nil when it has none).
func (t *TrustStore) Trust(dir string, w *Workspace) error {
	f := TrustedFolder{TrustedAt: time.Now().UTC().Truncate(time.Second)}
	if w != nil {
		f.SHA256, f.Keys = w.Sum, valueSums(w.Risky)
	}
	return t.update(func(folders map[string]TrustedFolder) { folders[dir] = f })
}

// Revoke forgets dir's trust, and says whether it was trusted.
func (t *TrustStore) Revoke(dir string) (bool, error) {
	found := false
	err := t.update(func(folders map[string]TrustedFolder) {
		_, found = folders[dir]
		delete(folders, dir)
	})
	return found, err
}

// update changes the record under a lock file, on what is on disk now: two
// agentty processes trusting folders at once both keep their record.
func (t *TrustStore) update(change func(map[string]TrustedFolder)) error {
	dir := filepath.Dir(t.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	lf, err := os.OpenFile(t.path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	defer lf.Close() // releases the lock
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("trust: lock: %w", err)
	}
	fresh, err := LoadTrustFile(t.path)
	if err != nil {
		return err
	}
	change(fresh.Folders)
	t.Folders = fresh.Folders
	return t.save()
}

// save replaces the file atomically: a temp file, synced, renamed over it.
func (t *TrustStore) save() error {
	dir := filepath.Dir(t.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	b, _ := json.MarshalIndent(t, "", "  ")
	tmp, err := os.CreateTemp(dir, ".trusted-*.json")
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("trust: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("trust: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	if err := os.Rename(tmp.Name(), t.path); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	return nil
}

// Where is the trust file's path.
func (t *TrustStore) Where() string { return t.path }
