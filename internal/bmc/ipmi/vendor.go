package ipmi

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/bougou/go-ipmi/pkg/client"
)

// DeviceID is what a BMC's Get Device ID answers (ipmitool's `mc info`),
// as far as ferro reads it.
type DeviceID struct {
	// ManufacturerID is the IANA Private Enterprise Number of the BMC's
	// maker (20 bits).
	ManufacturerID uint32
	ProductID      uint16
}

// DeviceID sends Get Device ID.
func (c *Client) DeviceID(ctx context.Context, t Target) (DeviceID, error) {
	var d DeviceID
	err := c.do(ctx, t, "get device id", func(ctx context.Context, ic *client.Client) error {
		res, err := ic.GetDeviceID(ctx)
		if err != nil {
			return err
		}
		d = DeviceID{ManufacturerID: res.ManufacturerID & 0x0fffff, ProductID: res.ProductID}
		return nil
	})
	return d, err
}

// IANARegistry is where Debian's ipmitool package puts IANA's Private
// Enterprise Numbers registry, which ipmitool reads to name manufacturers.
const IANARegistry = "/usr/share/misc/enterprise-numbers.txt"

// ManufacturerName is the "Manufacturer Name" ipmitool's `mc info` prints
// for a manufacturer ID, which Ironic lower-cases into properties.vendor:
// "Unknown" for 0, "Unspecified" for 0xFFFFF, the organisation the IANA
// registry (IANARegistry, when installed) gives, else "Unknown (0x…)". Without
// the registry file the names of the usual server makers are built in.
func ManufacturerName(id uint32) string { return names.name(id) }

var names = &manufacturerNames{registry: IANARegistry, cache: map[uint32]string{}}

// manufacturerNames looks names up in a registry file, once per ID.
type manufacturerNames struct {
	registry string
	mu       sync.Mutex
	cache    map[uint32]string
}

func (m *manufacturerNames) name(id uint32) string {
	switch id {
	case 0:
		return "Unknown" // ipmitool's own, before the registry's "Reserved"
	case 0x0fffff:
		return "Unspecified"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if n, ok := m.cache[id]; ok {
		return n
	}
	n, found, err := lookupRegistry(m.registry, id)
	if err != nil || !found {
		if builtin, ok := serverMakers[id]; ok && err != nil {
			n = builtin // no registry file: the built-in table stands in
		} else {
			n = fmt.Sprintf("Unknown (0x%02X)", id)
		}
	}
	m.cache[id] = n
	return n
}

// lookupRegistry reads the IANA registry as ipmitool does: a line that
// starts with a decimal number is an enterprise number, the next line, when
// indented by exactly two spaces, its organisation; the first entry of id wins.
func lookupRegistry(path string, id uint32) (name string, found bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] < '0' || line[0] > '9' {
			continue
		}
		digits := line
		if i := strings.IndexFunc(line, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
			digits = line[:i]
		}
		if n, err := strconv.ParseUint(digits, 10, 32); err != nil || uint32(n) != id || !sc.Scan() {
			continue
		}
		next := sc.Text()
		if len(next) > 2 && strings.HasPrefix(next, "  ") && next[2] != ' ' {
			return next[2:], true, nil
		}
	}
	return "", false, sc.Err()
}

// serverMakers are the IANA registry's names (as of 2024-05-16, the file
// Debian 12's ipmitool ships) of the makers whose BMCs ferro meets most:
// what ipmitool prints for them, for hosts without the registry file.
var serverMakers = map[uint32]string{
	2:     "IBM (https://w3.ibm.com/standards )",
	11:    "Hewlett-Packard",
	42:    "Sun Microsystems",
	111:   "Oracle",
	116:   "Hitachi, Ltd.",
	119:   "NEC Corporation",
	186:   "Toshiba Corporation",
	231:   "Fujitsu Technology Solutions GmbH (formerly 'Fujitsu Siemens Computers')",
	311:   "Microsoft",
	343:   "Intel Corporation",
	399:   "Hitachi Computer Products (America), Inc.",
	674:   "Dell Inc.",
	2011:  "HUAWEI Technology Co.,Ltd",
	2623:  "ASUSTek Computer Inc.",
	3704:  "Advanced Micro Devices, Inc",
	4753:  "MontaVista Software, Inc.", // OpenIPMI's ipmi_sim
	5703:  "NVIDIA Corporation",
	5771:  "Cisco Systems, Inc.",
	6569:  "INVENTEC CORPORATION",
	6653:  "Tyan Computer Corporation",
	7154:  "Intelligent Platform Management Interface forum",
	7244:  "Quanta Computer Inc.",
	10368: "Fujitsu Technology Solutions GmbH (formerly 'Fujitsu Siemens Computers')",
	10876: "Super Micro Computer Inc.",
	11129: "Google, Inc.",
	12634: "PICMG",
	15370: "GIGA-BYTE TECHNOLOGY CO., LTD",
	19046: "Lenovo Enterprise Business Group",
	20301: "IBM eServer X",
	20974: "American Megatrends, Inc",
	33049: "Mellanox Technologies LTD",
	37945: "Inspur(BeiJing) Electronic Information Industry Co.,Ltd",
	40092: "Wiwynn Corporation",
	40981: "Facebook, Inc.",
	42385: "AIC Inc.",
	47196: "Hewlett Packard Enterprise",
	48482: "Linaro Ltd",
	49622: "ASRock Rack Incorporation",
}
