package policy

import (
	"crypto/ed25519"
	"crypto/rand"
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
