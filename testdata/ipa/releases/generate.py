#!/usr/bin/env python3
"""Write the report every ironic-python-agent release from 9.4 to 12.0 posts.

    python3 testdata/ipa/releases/generate.py /work/.mirror/openstack+ironic-python-agent/repo

For each release tag the body is built from that tag's own code, read with
`git show TAG:...`:

- the fields of each inventory object are the tag's `serializable_fields`
  (hardware.py), in that order: socket_count from 9.9, the sector sizes
  from 10.0, the NIC's pci_address and driver from 10.1, the disk's tran
  from 11.2, system_vendor.firmware and speed_mbps from 9.5;
- the collectors are the tag's entry points (setup.cfg, else
  pyproject.toml): lldp from 9.5, usb-devices from 9.12; pci_devices
  carries numa_node_id, sysfs' text, from 9.8;
- bmc_address and bmc_v6address are null from 11.3 (skip_bmc_detect,
  and from 9.14 on a machine without an IPMI device), the ipmitool
  placeholders before;
- the keys are in the order collect_default and call_inspector set them
  ("error" last), and the body is encoded by Python's json module with
  the separators of IPA's RESTJSONEncoder (indent None);
- the headers are those of call_inspector: requests' defaults, plus
  Content-Type and Accept: application/json from 9.9 (9.4-9.8 send no
  Content-Type). From 9.10 an agent without a callback URL posts to
  <ipa-api-url>/v1/continue_inspection.

The machine is one small UEFI virtual machine; each release gets its own
MAC addresses so that one test can post them all. The output is
deterministic; the files are committed.
"""

import base64
import gzip
import io
import json
import os
import re
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
RELEASE = re.compile(r'^(9\.([4-9]|1[0-9])|1[0-2])\.[0-9]+(\.[0-9]+)?$')


def git(repo, *args):
    return subprocess.run(['git', '-C', repo, *args], check=True,
                          capture_output=True, text=True).stdout


def version_key(tag):
    return tuple(int(x) for x in tag.split('.'))


def serializable_fields(hardware_py):
    fields = {}
    for m in re.finditer(r'^class (\w+)\(encoding\.SerializableComparable\):'
                         r'\s+serializable_fields = \((.*?)\)',
                         hardware_py, re.S | re.M):
        fields[m.group(1)] = re.findall(r"'(\w+)'", m.group(2))
    return fields


def collectors(repo, tag):
    names = set()
    for path in ('setup.cfg', 'pyproject.toml'):
        try:
            text = git(repo, 'show', f'{tag}:{path}')
        except subprocess.CalledProcessError:
            continue
        m = re.search(r'ironic_python_agent\.inspector\.collectors"?\]? *=?'
                      r'\s*\n(.*?)(?:\n\s*\n|\n\[)', text, re.S)
        if m:
            names |= set(re.findall(r'^\s*([a-z-]+)\s*=', m.group(1), re.M))
    return names


def manager_version(hardware_py):
    m = re.search(r"class GenericHardwareManager\(HardwareManager\):\s+"
                  r"HARDWARE_MANAGER_NAME = '(\w+)'.*?"
                  r"HARDWARE_MANAGER_VERSION = '([\d.]+)'", hardware_py, re.S)
    return {'name': m.group(1), 'version': m.group(2)}


def serialize(fields, values):
    """Serializable.serialize: the fields in order, None when unset."""
    return {f: values.get(f) for f in fields}


def tlv(typ, value):
    return [typ, value.hex()]


def logs_blob():
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode='wb', mtime=0) as gz:
        with tarfile.open(fileobj=gz, mode='w') as tar:
            body = b'-- Journal begins --\nironic-python-agent: started\n'
            info = tarfile.TarInfo('journal')
            info.size, info.mtime = len(body), 0
            tar.addfile(info, io.BytesIO(body))
    return base64.b64encode(buf.getvalue()).decode()


def report(repo, tag, index):
    hw = git(repo, 'show', f'{tag}:ironic_python_agent/hardware.py')
    insp = git(repo, 'show', f'{tag}:ironic_python_agent/inspector.py')
    fields = serializable_fields(hw)
    available = collectors(repo, tag)
    v = version_key(tag)

    mac = [f'52:54:{index:02x}:a0:00:0{i}' for i in (1, 2)]
    bootif = '01-' + mac[0].replace(':', '-')
    nic = {}
    for i, name in enumerate(('enp1s0', 'enp2s0')):
        nic[name] = serialize(fields['NetworkInterface'], {
            'name': name, 'mac_address': mac[i],
            'ipv4_address': '192.0.2.%d' % (100 + index) if i == 0 else None,
            'ipv6_address': ('fe80::5054:ff:fea0:%x%%%s' % (i + 1, name)),
            'has_carrier': i == 0, 'lldp': None,
            'vendor': '0x1af4', 'product': '0x0001', 'client_id': None,
            'biosdevname': None, 'speed_mbps': 10000 if i == 0 else None,
            'pci_address': '0000:0%d:00.0' % (i + 1),
            'driver': 'virtio_net'})
    disks = [serialize(fields['BlockDevice'], {
        'name': '/dev/vda', 'model': '', 'size': 21474836480,
        'rotational': True, 'wwn': None, 'serial': 'ferro-root-%d' % index,
        'vendor': '0x1af4', 'wwn_with_extension': None,
        'wwn_vendor_extension': None, 'hctl': None,
        'by_path': '/dev/disk/by-path/pci-0000:04:00.0',
        'logical_sectors': 512, 'physical_sectors': 512, 'tran': None,
    }), serialize(fields['BlockDevice'], {
        'name': '/dev/sda', 'model': 'QEMU HARDDISK', 'size': 107374182400,
        'rotational': False, 'wwn': '0x5000c500a0b1c2d3',
        'serial': 'QM00001', 'vendor': 'ATA',
        'wwn_with_extension': '0x5000c500a0b1c2d3',
        'wwn_vendor_extension': None, 'hctl': '0:0:0:0',
        'by_path': '/dev/disk/by-path/pci-0000:00:1f.2-ata-1',
        'logical_sectors': 512, 'physical_sectors': 4096, 'tran': 'sata',
    })]
    vendor = {'product_name': 'Standard PC (Q35 + ICH9, 2009)',
              'serial_number': 'ferro-%s' % tag, 'manufacturer': 'QEMU'}
    if 'SystemFirmware' in fields:
        vendor['firmware'] = serialize(fields['SystemFirmware'], {
            'vendor': 'EFI Development Kit II / OVMF',
            'version': '2024.02-2', 'build_date': '03/01/2024'})
    bmc_null = v >= (11, 3)
    inventory = {
        'interfaces': list(nic.values()),
        'cpu': serialize(fields['CPU'], {
            'model_name': 'Intel Xeon Processor (Icelake)',
            'frequency': '2593.9060', 'count': 4, 'architecture': 'x86_64',
            'flags': ['fpu', 'vme', 'pse', 'vmx', 'aes', 'avx2', 'pdpe1gb'],
            'socket_count': 1}),
        'disks': disks,
        'memory': serialize(fields['Memory'], {'total': 8330665984,
                                               'physical_mb': 8192}),
        'bmc_address': None if bmc_null else '192.0.2.%d' % (200 + index),
        'bmc_v6address': None if bmc_null else '::/0',
        'system_vendor': serialize(fields['SystemVendorInfo'], vendor),
        'boot': serialize(fields['BootInfo'], {'current_boot_mode': 'uefi',
                                               'pxe_interface': bootif}),
        'hostname': 'localhost.localdomain',
    }
    if not bmc_null:
        inventory['bmc_mac'] = '52:54:%02x:b0:00:01' % index

    order = ['default', 'extra-hardware', 'pci-devices', 'numa-topology',
             'dmi-decode', 'lldp', 'usb-devices', 'logs']
    names = [n for n in order if n in available]
    data = {'inventory': inventory, 'root_disk': disks[0],
            'boot_interface': bootif,
            'configuration': {'collectors': names,
                              'managers': [manager_version(hw)]}}
    if 'extra-hardware' in names:
        data['data'] = [['cpu', 'logical', 'number', '4'],
                        ['memory', 'total', 'size', '8589934592'],
                        ['disk', 'vda', 'size', '21'],
                        ['system', 'product', 'vendor', 'QEMU']]
    if 'pci-devices' in names:
        devs = []
        for bus, dev, cls, node in (('0000:01:00.0', '1041', '020000', '0'),
                                    ('0000:00:1f.2', '2922', '010601', '-1')):
            d = {'vendor_id': '1af4' if dev == '1041' else '8086',
                 'product_id': dev, 'class': cls, 'revision': '01',
                 'bus': bus}
            if 'numa_node_id' in insp:
                d['numa_node_id'] = node
            devs.append(d)
        data['pci_devices'] = devs
    if 'numa-topology' in names:
        data['numa_topology'] = {
            'ram': [{'numa_node': 0, 'size_kb': 8131636}],
            'cpus': [{'cpu': 0, 'numa_node': 0, 'thread_siblings': [0, 1]},
                     {'cpu': 1, 'numa_node': 0, 'thread_siblings': [2, 3]}],
            'nics': [{'name': 'enp1s0', 'numa_node': 0}]}
    if 'dmi-decode' in names:
        data['dmi'] = {'bios': {'Handle': 'Handle 0x0000, DMI type 0, 26 bytes',
                                'Vendor': 'EDK II', 'Version': '2024.02-2'},
                       'cpu': [{'Handle': 'Handle 0x0400, DMI type 4, 48 bytes',
                                'Socket Designation': 'CPU 0',
                                'Core Count': '4'}],
                       'memory': {'Maximum Capacity': '8 GB',
                                  'Number Of Devices': 1,
                                  'devices': [{'Size': '8 GB',
                                               'Type': 'RAM'}]}}
    if 'lldp' in names:
        data['lldp_raw'] = {'enp1s0': [
            tlv(1, bytes([4, 0x52, 0x54, 0x00, 0xc0, 0x00, 0x01])),
            tlv(2, b'\x05Ethernet1/%d' % (index + 1)),
            tlv(3, b'\x00\x78'),
            tlv(5, b'leaf-1.example.org'),
            tlv(0, b''),
        ], 'enp2s0': []}
    if 'usb-devices' in names:
        data['usb_devices'] = [{'product': 'QEMU USB Tablet',
                                'vendor': 'Adomax Technology Co., Ltd',
                                'handle': 'USB:1:1'}]
    if 'logs' in names:
        data['logs'] = logs_blob()
    data['error'] = None  # call_inspector: data['error'] = failures.get_error()

    headers = {'User-Agent': 'python-requests/2.31.0',
               'Accept-Encoding': 'gzip, deflate', 'Accept': '*/*',
               'Connection': 'keep-alive'}
    if "'Content-Type': 'application/json'" in insp:
        headers['Accept'] = 'application/json'
        headers['Content-Type'] = 'application/json'
    paths = ['/v1/continue']
    if '/v1/continue_inspection' in insp:
        paths.append('/v1/continue_inspection')
    body = json.JSONEncoder().encode(data)
    return body, {'release': tag, 'file': tag + '.json', 'headers': headers,
                  'paths': paths, 'macs': mac,
                  'bmc_address': inventory['bmc_address']}


def main():
    repo = sys.argv[1]
    tags = sorted((t for t in git(repo, 'tag').split() if RELEASE.match(t)),
                  key=version_key)
    tags = [t for t in tags if (9, 4) <= version_key(t)[:2] <= (12, 0)]
    manifest = []
    for index, tag in enumerate(tags):
        body, entry = report(repo, tag, index)
        with open(os.path.join(HERE, entry['file']), 'w') as f:
            f.write(body)
        manifest.append(entry)
    with open(os.path.join(HERE, 'releases.json'), 'w') as f:
        json.dump(manifest, f, indent=1)
        f.write('\n')


if __name__ == '__main__':
    main()
