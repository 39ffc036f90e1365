package sign_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
	"golang.org/x/crypto/ssh"
)

// signVerify proves s signs for want: SSHSIG signature verified against want.
func signVerify(t *testing.T, s sign.Signer, want ssh.PublicKey) {
	t.Helper()
	if !sameKey(s.PublicKey(), want) {
		t.Fatalf("signer key %s, want %s", sign.Fingerprint(s.PublicKey()), sign.Fingerprint(want))
	}
	data := []byte("message")
	sig, err := sign.SignSSHSig(s, data, sign.NamespaceGit)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sign.VerifySSHSig(sig, data, sign.NamespaceGit, trust(want)); err != nil {
		t.Fatal(err)
	}
}

func TestLoadSignerPrivateFile(t *testing.T) {
	s := testutil.NewSandbox(t)
	for _, typ := range keyTypes {
		t.Run(typ, func(t *testing.T) {
			k := s.NewKey("priv-"+typ, typ)
			// k.Private has a k.Private.pub beside it; that is fine.
			signer := loadFile(t, k.Private)
			signVerify(t, signer, pubOf(t, k))
			if err := signer.Close(); err != nil {
				t.Fatal(err)
			}
			// Without the .pub file too.
			dir := t.TempDir()
			b, _ := os.ReadFile(k.Private)
			p := writeFile(t, dir, "id", b)
			signVerify(t, loadFile(t, p), pubOf(t, k))
			// The raw ssh.Signature for RSA is rsa-sha2-512.
			sig, err := signer.Sign(nil, []byte("x"))
			if err != nil {
				t.Fatal(err)
			}
			if typ == "rsa" && sig.Format != ssh.KeyAlgoRSASHA512 {
				t.Fatalf("rsa Sign format %q", sig.Format)
			}
			if _, err := signer.(ssh.AlgorithmSigner).SignWithAlgorithm(nil, []byte("x"), ssh.KeyAlgoRSA); err == nil {
				t.Fatal("SHA-1 ssh-rsa signature allowed")
			}
		})
	}
}

func TestLoadSignerPrecedenceAndHome(t *testing.T) {
	s := testutil.NewSandbox(t)
	a := s.NewKey("a", "ed25519")
	b := s.NewKey("b", "ed25519")
	// File wins over SigningKey.
	sg, err := sign.LoadSigner(sign.KeySpec{File: a.Private, SigningKey: b.Private})
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Close()
	signVerify(t, sg, pubOf(t, a))
	// SigningKey path used when File is empty.
	sg2, err := sign.LoadSigner(sign.KeySpec{SigningKey: b.Private})
	if err != nil {
		t.Fatal(err)
	}
	defer sg2.Close()
	signVerify(t, sg2, pubOf(t, b))
	// "~/" is expanded with Home.
	rel, err := filepath.Rel(s.Home, a.Private)
	if err != nil {
		t.Fatal(err)
	}
	sg3, err := sign.LoadSigner(sign.KeySpec{SigningKey: "~/" + rel, Home: s.Home})
	if err != nil {
		t.Fatal(err)
	}
	defer sg3.Close()
	signVerify(t, sg3, pubOf(t, a))
	if _, err := sign.LoadSigner(sign.KeySpec{File: "~/" + rel}); err == nil {
		t.Fatal("~ expanded without Home")
	}
}

func TestLoadSignerNoKey(t *testing.T) {
	_, err := sign.LoadSigner(sign.KeySpec{AgentSocket: "/nonexistent", Home: "/"})
	if !errors.Is(err, sign.ErrNoKey) {
		t.Fatalf("err = %v, want ErrNoKey", err)
	}
	if !strings.Contains(err.Error(), "--key") || !strings.Contains(err.Error(), "user.signingkey") {
		t.Fatalf("error lacks hint: %v", err)
	}
}

func TestLoadSignerMissingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nope")
	_, err := sign.LoadSigner(sign.KeySpec{File: p})
	if err == nil || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), p) {
		t.Fatalf("err = %v", err)
	}
	// A directory is not a key.
	if _, err := sign.LoadSigner(sign.KeySpec{File: t.TempDir()}); err == nil {
		t.Fatal("directory accepted")
	}
	// Garbage is not a key.
	g := writeFile(t, t.TempDir(), "g", []byte("not a key\n"))
	if _, err := sign.LoadSigner(sign.KeySpec{File: g}); err == nil {
		t.Fatal("garbage accepted")
	}
}

// TestLoadSignerAgentByFingerprint loads two keys into ssh-agent and checks
// that a .pub file selects its own key, whichever the agent lists first.
func TestLoadSignerAgentByFingerprint(t *testing.T) {
	s := testutil.NewSandbox(t)
	sock := s.StartAgent()
	for _, typ := range keyTypes {
		t.Run(typ, func(t *testing.T) {
			first := s.NewKey("first-"+typ, typ)
			second := s.NewKey("second-"+typ, typ)
			s.AddToAgent(first)
			s.AddToAgent(second)
			for _, k := range []testutil.Key{first, second} {
				sg, err := sign.LoadSigner(sign.KeySpec{File: k.Public, AgentSocket: sock})
				if err != nil {
					t.Fatal(err)
				}
				signVerify(t, sg, pubOf(t, k))
				if typ == "rsa" {
					sig, err := sg.Sign(nil, []byte("x"))
					if err != nil || sig.Format != ssh.KeyAlgoRSASHA512 {
						t.Fatalf("agent rsa signature %v, %v", sig, err)
					}
					if _, err := sg.(ssh.AlgorithmSigner).SignWithAlgorithm(nil, []byte("x"), ssh.KeyAlgoRSA); err == nil {
						t.Fatal("SHA-1 ssh-rsa signature allowed")
					}
				}
				if err := sg.Close(); err != nil {
					t.Fatal(err)
				}
				if err := sg.Close(); err != nil {
					t.Fatalf("second Close: %v", err)
				}
				if _, err := sg.Sign(nil, []byte("x")); err == nil {
					t.Fatal("signed after Close")
				}
			}
		})
	}
}

func TestLoadSignerLiteral(t *testing.T) {
	s := testutil.NewSandbox(t)
	sock := s.StartAgent()
	a := s.NewKey("lit-a", "ed25519")
	b := s.NewKey("lit-b", "ecdsa")
	s.AddToAgent(a)
	s.AddToAgent(b)
	for name, v := range map[string]string{
		"key:: ed25519": "key::" + a.PublicLine(t),
		"bare ed25519":  a.PublicLine(t),
		"key:: ecdsa":   "key::" + b.PublicLine(t),
		"bare ecdsa":    b.PublicLine(t),
		"pub path":      b.Public,
	} {
		t.Run(name, func(t *testing.T) {
			sg, err := sign.LoadSigner(sign.KeySpec{SigningKey: v, AgentSocket: sock})
			if err != nil {
				t.Fatal(err)
			}
			defer sg.Close()
			want := a
			if strings.Contains(name, "ecdsa") || name == "pub path" {
				want = b
			}
			signVerify(t, sg, pubOf(t, want))
		})
	}
	if _, err := sign.LoadSigner(sign.KeySpec{SigningKey: "key::ssh-ed25519 AAAAnotbase64", AgentSocket: sock}); err == nil {
		t.Fatal("bad literal accepted")
	}
}

func TestLoadSignerAgentKeyMissing(t *testing.T) {
	s := testutil.NewSandbox(t)
	sock := s.StartAgent()
	loaded := s.NewKey("loaded", "ed25519")
	missing := s.NewKey("missing", "ed25519")
	s.AddToAgent(loaded)
	// A .pub with its private key file beside it signs with that file
	// (TestLoadSignerPublicBesidePrivate); here the private key is nowhere.
	if err := os.Remove(missing.Private); err != nil {
		t.Fatal(err)
	}
	fp := sign.Fingerprint(pubOf(t, missing))
	for name, spec := range map[string]sign.KeySpec{
		"pub file":   {File: missing.Public, AgentSocket: sock},
		"literal":    {SigningKey: "key::" + missing.PublicLine(t), AgentSocket: sock},
		"no agent":   {File: missing.Public},
		"dead agent": {File: missing.Public, AgentSocket: filepath.Join(t.TempDir(), "nosock")},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := sign.LoadSigner(spec)
			if err == nil {
				t.Fatal("loaded a key the agent does not hold")
			}
			{
				if !errors.Is(err, sign.ErrKeyUnavailable) || !strings.Contains(err.Error(), fp) || !strings.Contains(err.Error(), "ssh-agent") {
					t.Fatalf("error should name %s and ssh-agent: %v", fp, err)
				}
			}
			t.Log(err)
		})
	}
}

func TestLoadSignerEncryptedKey(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := filepath.Join(s.Home, "enc")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, typ := range keyTypes {
		t.Run(typ, func(t *testing.T) {
			p := filepath.Join(dir, "enc-"+typ)
			s.Run(dir, "ssh-keygen", "-q", "-t", typ, "-N", "secret", "-C", "enc", "-f", p)
			_, err := sign.LoadSigner(sign.KeySpec{File: p})
			if !errors.Is(err, sign.ErrKeyUnavailable) {
				t.Fatalf("err = %v, want ErrKeyUnavailable", err)
			}
			msg := err.Error()
			for _, want := range []string{"passphrase", "ssh-agent", "ssh-add", p + ".pub"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
		})
	}
	// An encrypted key whose private half is in ssh-agent is used from there.
	sock := s.StartAgent()
	p := filepath.Join(dir, "enc-agent")
	s.Run(dir, "ssh-keygen", "-q", "-t", "ed25519", "-N", "secret", "-C", "enc", "-f", p)
	plain := filepath.Join(dir, "plain-copy")
	s.Run(dir, "cp", p, plain)
	s.Run(dir, "ssh-keygen", "-q", "-p", "-P", "secret", "-N", "", "-f", plain)
	s.Run(dir, "ssh-add", "-q", plain)
	sg, err := sign.LoadSigner(sign.KeySpec{File: p, AgentSocket: sock})
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Close()
	signVerify(t, sg, pubOf(t, testutil.Key{Private: p, Public: p + ".pub"}))
}

func TestLoadSignerRejectsSmallRSA(t *testing.T) {
	s := testutil.NewSandbox(t)
	p := filepath.Join(s.Home, "small")
	s.Run(s.Home, "ssh-keygen", "-q", "-t", "rsa", "-b", "1024", "-N", "", "-f", p)
	if _, err := sign.LoadSigner(sign.KeySpec{File: p}); !errors.Is(err, sign.ErrUnsupportedKey) {
		t.Fatalf("1024-bit RSA: err = %v, want ErrUnsupportedKey", err)
	}
	if _, err := sign.LoadSigner(sign.KeySpec{File: p + ".pub", AgentSocket: "/nonexistent"}); !errors.Is(err, sign.ErrUnsupportedKey) {
		t.Fatalf("1024-bit RSA pub: err = %v, want ErrUnsupportedKey", err)
	}
}

// TestAgentSignerConcurrent signs from many goroutines on one agent Signer.
func TestAgentSignerConcurrent(t *testing.T) {
	s := testutil.NewSandbox(t)
	sock := s.StartAgent()
	k := s.NewKey("conc", "ed25519")
	s.AddToAgent(k)
	sg, err := sign.LoadSigner(sign.KeySpec{File: k.Public, AgentSocket: sock})
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Close()
	pub := pubOf(t, k)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			data := []byte{byte(i)}
			sig, err := sign.SignSSHSig(sg, data, sign.NamespaceGit)
			if err == nil {
				_, err = sign.VerifySSHSig(sig, data, sign.NamespaceGit, trust(pub))
			}
			errs <- err
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Found adopting git-secure: README's "git config user.signingkey
// ~/.ssh/id_ed25519.pub" without an agent made every push of a protected
// ref fail ("must be in ssh-agent"), although git commit -S signs with the
// same setting: ssh-keygen -Y sign uses the private key file beside the
// .pub when no agent holds the key. git-secure does the same, and never
// with a private key file that holds another key.
func TestLoadSignerPublicBesidePrivate(t *testing.T) {
	s := testutil.NewSandbox(t)
	sock := s.StartAgent()
	other := s.NewKey("other", "ed25519")
	s.AddToAgent(other)
	for _, typ := range keyTypes {
		k := s.NewKey("beside-"+typ, typ)
		for name, spec := range map[string]sign.KeySpec{
			"no agent":              {File: k.Public},
			"agent without the key": {File: k.Public, AgentSocket: sock},
			"user.signingkey":       {SigningKey: k.Public},
		} {
			t.Run(typ+"/"+name, func(t *testing.T) {
				sg, err := sign.LoadSigner(spec)
				if err != nil {
					t.Fatal(err)
				}
				defer sg.Close()
				signVerify(t, sg, pubOf(t, k))
			})
		}
	}

	// The file beside holds another key: never used; the error names the
	// key wanted, the agent and the way out.
	k := s.NewKey("swapped", "ed25519")
	data, err := os.ReadFile(other.Private)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.Private, data, 0o600); err != nil {
		t.Fatal(err)
	}
	fp := sign.Fingerprint(pubOf(t, k))
	_, err = sign.LoadSigner(sign.KeySpec{File: k.Public})
	if !errors.Is(err, sign.ErrKeyUnavailable) {
		t.Fatalf("a .pub beside another key's private file: err = %v, want ErrKeyUnavailable", err)
	}
	for _, want := range []string{fp, "ssh-agent", "ssh-add", "private key file"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	// A passphrase-protected private key beside: the error says to add it
	// to ssh-agent.
	dir := filepath.Join(s.Home, "enc")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "enc")
	s.Run(dir, "ssh-keygen", "-q", "-t", "ed25519", "-N", "secret", "-C", "enc", "-f", p)
	_, err = sign.LoadSigner(sign.KeySpec{File: p + ".pub"})
	if !errors.Is(err, sign.ErrKeyUnavailable) || !strings.Contains(err.Error(), "passphrase") || !strings.Contains(err.Error(), "ssh-add "+p) {
		t.Fatalf("a .pub beside a passphrase-protected key: %v", err)
	}
}
