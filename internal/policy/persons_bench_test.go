package policy

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"testing"

	"golang.org/x/crypto/ssh"
)

// BenchmarkParseManyPersons decodes a policy of an organisation's size:
// persons=N persons with one ed25519 key each (paid once per policy entry
// by verification).
func BenchmarkParseManyPersons(b *testing.B) {
	for _, n := range []int{100, 1000, 3000} {
		b.Run(fmt.Sprintf("persons=%d", n), func(b *testing.B) {
			_, base, p := staged(b)
			add := make([]NewPerson, n)
			for i := range add {
				pub, _, err := ed25519.GenerateKey(rand.Reader)
				must(b, err)
				k, err := ssh.NewPublicKey(pub)
				must(b, err)
				add[i] = NewPerson{Name: fmt.Sprintf("person%d", i), Keys: []ssh.PublicKey{k}}
			}
			must(b, p.AddPersons(base, add, t1))
			r, tg := encode(b, p)
			b.ReportAllocs()
			b.SetBytes(int64(len(r) + len(tg)))
			for b.Loop() {
				if _, err := Parse(r, tg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseTargetsBound is what one targets.json costs its reader at
// the bound: honest, MaxPersons persons (less the bench policy's few keys)
// with one ed25519 key each; hostile, a file of MaxTargetsSize bytes that
// passes strictjson.Check and is all small JSON values (the worst ratio
// of memory to bytes encoding/json and go-tuf reach), refused after
// decoding. B/op bounds the memory a hostile policy makes a reader spend.
func BenchmarkParseTargetsBound(b *testing.B) {
	f, base, p := staged(b)
	must(b, p.AddPersons(base, benchPersons(b, "person", MaxPersons-100), t1))
	must(b, p.SignRoot(f.root.TUF))
	must(b, p.SignTargets(f.root.TUF))
	r, tg := encode(b, p)
	b.Run(fmt.Sprintf("honest/persons=%d", len(p.Persons())), func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(tg)))
		for b.Loop() {
			if _, err := Parse(r, tg); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What a policy in force costs to read signed first (LoadSigned).
	b.Run(fmt.Sprintf("honest-signed/persons=%d", len(p.Persons())), func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(tg)))
		for b.Loop() {
			if _, err := ParseSigned(nil, r, tg, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, v := range []string{"[]", "{}", "0", `""`} {
		hostile := hostileTargets(b, tg, v)
		b.Run("hostile/"+v, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(hostile)))
			for b.Loop() {
				if _, err := Parse(r, hostile); err == nil {
					b.Fatal("hostile targets.json parsed")
				}
			}
		})
	}
}

// hostileTargets returns tg with an unknown field of signed holding an
// array of copies of v, MaxTargetsSize bytes in all.
func hostileTargets(b *testing.B, tg []byte, v string) []byte {
	b.Helper()
	head := []byte(`{"signatures":[],"signed":{"x-pad":[`)
	n := (MaxTargetsSize - len(head) - len(`]}}`)) / (len(v) + 1)
	out := append([]byte{}, head...)
	for i := range n {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, v...)
	}
	out = append(out, `]}}`...)
	if len(out) > MaxTargetsSize {
		b.Fatalf("hostile targets.json of %d bytes", len(out))
	}
	return out
}

// benchPersons returns n persons named prefix0... with an ed25519 key each.
func benchPersons(b testing.TB, prefix string, n int) []NewPerson {
	b.Helper()
	out := make([]NewPerson, n)
	for i := range out {
		pub, _, err := ed25519.GenerateKey(rand.Reader)
		must(b, err)
		k, err := ssh.NewPublicKey(pub)
		must(b, err)
		out[i] = NewPerson{Name: fmt.Sprintf("%s%d", prefix, i), Keys: []ssh.PublicKey{k}}
	}
	return out
}

// BenchmarkRefuseHostileTargets measures what refusing a hostile
// targets.json costs: small values in arrays within maxItems, 4 MiB,
// with signatures that do not cover it. "decode" is ParseFiles (go-tuf
// decodes it, then index refuses it), "signed-first" ParseSigned (its
// signatures are refused before it is decoded).
func BenchmarkRefuseHostileTargets(b *testing.B) {
	f := newFixture(b)
	r, tg := encode(b, f.p)
	for _, v := range []string{"0", "[]", "{}"} {
		hostile := hostileTargetsWithin(b, tg, v)
		b.Run("decode/"+v, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseFiles(r, hostile, nil); err == nil {
					b.Fatal("hostile targets.json parsed")
				}
			}
		})
		b.Run("signed-first/"+v, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseSigned(f.p, r, hostile, nil); !errors.Is(err, ErrUnsigned) {
					b.Fatalf("hostile targets.json: %v", err)
				}
			}
		})
	}
}

// BenchmarkRefuseHostileRoot: a first root.json of many small values
// within MaxFileSize, whose signature no longer covers it, decoded
// (ParseFiles) and refused for its own signatures before decoding
// (ParseSigned with no previous root).
func BenchmarkRefuseHostileRoot(b *testing.B) {
	f := newFixture(b)
	r, tg := encode(b, f.p)
	for _, v := range []string{"0", "[]", "{}"} {
		hostile := paddedWithin(b, r, v, MaxFileSize)
		b.Run("decode/"+v, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseFiles(hostile, tg, nil); err == nil {
					b.Fatal("hostile root.json parsed")
				}
			}
		})
		b.Run("signed-first/"+v, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseSigned(nil, hostile, tg, nil); !errors.Is(err, ErrUnsigned) {
					b.Fatalf("hostile root.json: %v", err)
				}
			}
		})
	}
}
