package policy

import (
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/sign"
)

// newPersonKey is pub as a person's key; a key may belong to one person
// only.
func (p *Policy) newPersonKey(pub ssh.PublicKey) (*Key, error) {
	fp := sign.Fingerprint(pub)
	if owner, ok := p.ownerFP[fp]; ok {
		return nil, invalid("key %s already belongs to person %s", fp, owner.Name)
	}
	tk, id, err := sign.TUFKey(pub)
	if err != nil {
		return nil, invalid("key %s: %v", fp, err)
	}
	return &Key{ID: id, Public: pub, Fingerprint: fp, TUF: tk}, nil
}

// AddKey gives the person name one more key (a new laptop, a rotation):
// the person keeps their rules and teams, and either key counts for them,
// once.
func (p *Policy) AddKey(base *Policy, name string, pub ssh.PublicKey, now time.Time) error {
	return p.editKeys(base, name, now, func(person *Person) error {
		k, err := p.newPersonKey(pub)
		if err != nil {
			return err
		}
		person.Keys = append(person.Keys, k)
		return nil
	})
}

// RemoveKey takes one key from the person name: key is its SSH
// fingerprint (SHA256:...) or its TUF key ID. Entries the key signed
// before the change still verify under the policy of their time; from the
// change on, its signatures count for nobody. A person's last key is not
// removed (they could sign nothing).
func (p *Policy) RemoveKey(base *Policy, name, key string, now time.Time) error {
	return p.editKeys(base, name, now, func(person *Person) error {
		i := slices.IndexFunc(person.Keys, func(k *Key) bool { return k.Fingerprint == key || strings.EqualFold(k.ID, key) })
		if i < 0 {
			return invalid("person %s has no key %s (git secure policy list shows their keys)", name, key)
		}
		if len(person.Keys) == 1 {
			return invalid("%s is the last key of %s: add the new key first (git secure policy add-key %s --key NEW.pub), then remove this one; or remove the person (git secure policy remove-person %s)", key, name, name, name)
		}
		person.Keys = slices.Delete(slices.Clone(person.Keys), i, i+1)
		return nil
	})
}

// editKeys changes the keys of the person name with edit, on a copy (the
// persons of base share their values with p).
func (p *Policy) editKeys(base *Policy, name string, now time.Time, edit func(*Person) error) error {
	i := slices.IndexFunc(p.persons, func(x *Person) bool { return x.Name == name })
	if i < 0 {
		return invalid("no person named %s (see git secure policy list)", name)
	}
	person := &Person{Name: name, Keys: slices.Clone(p.persons[i].Keys)}
	if err := edit(person); err != nil {
		return err
	}
	persons := slices.Clone(p.persons)
	persons[i] = person
	if err := p.rebuildTargets(persons, p.rules); err != nil {
		return err
	}
	p.touchTargets(base, now)
	return nil
}
