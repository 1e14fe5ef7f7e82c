"""Print as JSON the firmware components Ironic's redfish firmware
interface caches (cache_firmware_components) for a System, read with
sushy: bios, bmc, and a nic:<serial or Id> per NetworkAdapter controller
with a FirmwarePackageVersion.

usage: sushy_firmware.py URL USER PASSWORD SYSTEM_PATH
"""
import json
import sys

import sushy

url, user, password, path = sys.argv[1:5]
root = sushy.Sushy(url, auth=sushy.auth.BasicAuth(username=user,
                                                  password=password))
system = root.get_system(path)
out = []
if system.bios_version:
    out.append({'component': 'bios', 'current_version': system.bios_version,
                'vendor': None, 'model': None, 'serial_number': None})
managers = system.managers
if managers and managers[0].firmware_version:
    out.append({'component': 'bmc',
                'current_version': managers[0].firmware_version,
                'vendor': None, 'model': managers[0].model,
                'serial_number': None})
chassis = system.chassis
adapters = chassis[0].network_adapters if chassis else None



def firmware_versions(adapter):
    """The controllers' FirmwarePackageVersion values.

    Ironic master reads adapter.controllers (sushy 5); Debian's sushy 4.3
    has no such attribute, so the member is read from the adapter's JSON.
    """
    if hasattr(adapter, 'controllers'):
        return [c.firmware_package_version for c in adapter.controllers]
    return [c.get('FirmwarePackageVersion')
            for c in adapter.json.get('Controllers') or []]


for adapter in (adapters.get_members() if adapters else []):
    for version in firmware_versions(adapter):
        if not version:
            continue
        out.append({'component': 'nic:' + (adapter.serial_number
                                           or adapter.identity),
                    'current_version': version,
                    'vendor': adapter.manufacturer, 'model': adapter.model,
                    'serial_number': adapter.serial_number})
print(json.dumps(out))
