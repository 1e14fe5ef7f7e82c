// Package metal3 is the acceptance test of issue 16 for metal3: it
// drives `ferro serve` the way metal3's baremetal-operator (BMO master)
// drives Ironic, through a BareMetalHost's whole life: the version check,
// Register with inspect_interface=agent, InspectHardware to completion
// with an IPA 12-shaped agent, the hardware details BMO builds, firmware
// components and BIOS settings, PowerOn/PowerOff, Provision (ferro's fake
// deploy interface as the default), Deprovision and Delete.
//
// BMO's own package cannot be imported (the Go module proxy refuses
// github.com/metal3-io/baremetal-operator), so provisioner_test.go replays
// its calls with the same gophercloud functions, options and bodies;
// docs/metal3.md is the request sequence it follows, read from BMO's code.
// The BMC is a real ferro-vbmc (IPMI for ipmi://, Redfish for
// redfish-virtualmedia://), so power calls reach a BMC.
//
// Both hardware paths pass with no request rewritten (ferro serves 1.115
// and the agent inspect interface); the lane is part of `make test`.
// FERRO_METAL3_DIAGNOSE=1 records each failing step and goes on with the
// barrier lowered (the server's own maximum version; node fields and
// interfaces ferro lacks dropped), so that every later step shows what it
// needs; FERRO_METAL3_TRANSCRIPT=path writes every request made.
//
//	scripts/go-test.sh -run TestBMO -v ./test/metal3/
//	FERRO_METAL3_DIAGNOSE=1 scripts/go-test.sh -run TestBMO -v ./test/metal3/
//
// This file only holds the documentation: the tests are package
// metal3_test.
package metal3
