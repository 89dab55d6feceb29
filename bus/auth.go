package bus

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// UsersFile is the name of the file, in agentty serve's store folder,
// that holds the users it requires: made on its first start, 0600, read by
// the commands that run on the same data folder.
const UsersFile = "users.json"

// Credential is a user and its password.
type Credential struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

// Users are the users agentty serve lets in.
type Users struct {
	// Operator may do everything: submit, work, watch, answer, cancel.
	Operator Credential `json:"operator"`
	// Worker may take and carry out runs; it may not cancel runs or
	// delete or purge streams.
	Worker Credential `json:"worker"`
	// Submit may submit runs, watch them, answer their pauses and
	// questions; not take runs, cancel them or change the streams.
	Submit Credential `json:"submit"`
	// URL is where the server that made them listens (RecordURL): the
	// operator's password goes to that server alone.
	URL string `json:"url,omitempty"`
}

// maxUsersFile bounds the users file's read: serve writes a few hundred
// bytes.
const maxUsersFile = 64 << 10

// RecordURL notes in dir's users file the URL the server listens on, for
// withUsersFile to give the password to it and to no other server.
func RecordURL(dir, url string) error {
	path := filepath.Join(dir, UsersFile)
	b, err := readSecret("the users of agentty serve", path, maxUsersFile)
	if err != nil {
		return err
	}
	var u Users
	if err := json.Unmarshal(b, &u); err != nil {
		return err
	}
	u.URL = url
	b, _ = json.MarshalIndent(u, "", "  ")
	return os.WriteFile(path, b, 0o600)
}

// LoadOrMakeUsers reads dir's users file, or makes it with a new
// operator and a random password; made says which.
func LoadOrMakeUsers(dir string) (u Users, made bool, err error) {
	path := filepath.Join(dir, UsersFile)
	b, err := readSecret("the users of agentty serve", path, maxUsersFile)
	if err == nil {
		if err := json.Unmarshal(b, &u); err != nil || u.Operator.User == "" || u.Operator.Password == "" {
			return u, false, fmt.Errorf("%s: not the users agentty serve made (%v): remove it to make new ones", path, err)
		}
		if u.Worker.User != "" && u.Submit.User != "" {
			return u, false, nil
		}
		// Made before the worker and submit users: they are added.
		if u.Worker.User == "" {
			u.Worker = Credential{User: "agentty-worker", Password: secretText()}
		}
		if u.Submit.User == "" {
			u.Submit = Credential{User: "agentty-submit", Password: secretText()}
		}
		b, _ = json.MarshalIndent(u, "", "  ")
		return u, true, os.WriteFile(path, b, 0o600)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return u, false, err
	}
	u = Users{Operator: Credential{User: "agentty", Password: secretText()}, Worker: Credential{User: "agentty-worker", Password: secretText()},
		Submit: Credential{User: "agentty-submit", Password: secretText()}}
	b, _ = json.MarshalIndent(u, "", "  ")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return u, false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return u, false, err
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		return u, false, err
	}
	return u, true, f.Sync()
}

// secretText is a random password.
func secretText() string {
	var b [24]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// serverUsers are u as the server's options take them.
func serverUsers(u *Users) []*server.User {
	if u == nil {
		return nil
	}
	out := []*server.User{{Username: u.Operator.User, Password: u.Operator.Password}}
	if u.Worker.User != "" {
		out = append(out, &server.User{Username: u.Worker.User, Password: u.Worker.Password, Permissions: WorkerRole.permissions()})
	}
	if u.Submit.User != "" {
		out = append(out, &server.User{Username: u.Submit.User, Password: u.Submit.Password, Permissions: SubmitRole.permissions()})
	}
	return out
}

// withUsersFile returns cfg's URL with the operator of the users file at
// path in it, when the URL names no user, no credentials file is given and
// the file is there (a command on the data folder of the agentty serve it
// connects to), for the servers of the URL that are that serve's address;
// else the URL as it is. A URL of another server never gets the password.
func withUsersFile(cfg Config) (string, error) {
	if cfg.UsersFile == "" || cfg.Creds != "" || strings.Contains(cfg.URL, "@") {
		return cfg.URL, nil
	}
	b, err := readSecret("the users of agentty serve", cfg.UsersFile, maxUsersFile)
	if errors.Is(err, os.ErrNotExist) {
		return cfg.URL, nil
	}
	var u Users
	if err == nil {
		err = json.Unmarshal(b, &u)
	}
	if err != nil {
		return "", fmt.Errorf("nats: the users of agentty serve in %s: %w", cfg.UsersFile, err)
	}
	served, err := url.Parse(u.URL)
	if err != nil || served.Host == "" {
		return cfg.URL, nil // no address recorded: whose server it is cannot be told
	}
	urls := strings.Split(cfg.URL, ",")
	for i, s := range urls {
		p, err := url.Parse(strings.TrimSpace(s))
		if err != nil || p.Host == "" {
			return cfg.URL, nil // left for the client to refuse
		}
		if p.Host == served.Host {
			p.User = url.UserPassword(u.Operator.User, u.Operator.Password)
			urls[i] = p.String()
		}
	}
	return strings.Join(urls, ","), nil
}
