package main

import (
	"time"

	"github.com/ferrometal/ferro/internal/config"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/deployimage"
	"github.com/ferrometal/ferro/internal/driver/pxe"
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

// pxeOptions are the pxe and ipxe interfaces' options from [pxe], [deploy]
// and [DEFAULT]debug.
func pxeOptions(cfg *config.Config, images *deployimage.Fetcher, dhcp driver.DHCP) pxe.Options {
	return pxe.Options{Images: images, DHCP: dhcp,
		TFTPRoot: cfg.PXE.TFTPRoot, HTTPRoot: cfg.Deploy.HTTPRoot, HTTPURL: cfg.Deploy.HTTPURL, TFTPServer: cfg.PXE.TFTPServer,
		PXEBootfile: cfg.PXE.PXEBootfileName, IPXEBootfile: cfg.PXE.IPXEBootfileName, IPXEBootScript: cfg.PXE.IPXEBootScript,
		KernelAppendParams: cfg.PXE.KernelAppendParams, Debug: cfg.Default.Debug}
}
