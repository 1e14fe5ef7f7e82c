package config

import (
	"slices"
	"testing"
)

func TestSecrets_EverySecretOption(t *testing.T) {
	c := Defaults(Hardware{})
	c.Neutron.Password = "neutron-pw"
	c.Inspector.Token = "inspector-token"
	c.KeystoneAuthtoken.Password = "keystone-pw"
	c.Database.Connection = "postgresql://ferro:db-pw@db/ferro"
	got := c.Secrets()
	for _, want := range []string{"neutron-pw", "inspector-token", "keystone-pw", "db-pw"} {
		if !slices.Contains(got, want) {
			t.Errorf("Secrets() = %v lacks %q", got, want)
		}
	}
}
