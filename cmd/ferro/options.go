package main

import (
	"time"

	"github.com/ferrometal/ferro/internal/config"
	"github.com/ferrometal/ferro/internal/openstack"
)

// seconds is an option given in whole seconds, as Ironic's are.
func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

// clientAuth maps a section's client credentials onto the outbound-client
// factory's options; the client sets the section, endpoint and service type.
func clientAuth(a config.ClientAuth) openstack.Options {
	return openstack.Options{
		AuthType: a.AuthType, Username: a.Username, Password: a.Password, AuthURL: a.AuthURL,
		ProjectName: a.ProjectName, UserDomainName: a.UserDomainName, ProjectDomainName: a.ProjectDomainName,
		SystemScope: a.SystemScope, Token: a.Token, RegionName: a.RegionName, CAFile: a.CAFile, Insecure: a.Insecure,
	}
}
