"""Drives ferro-vbmc's Redfish service with sushy, the library Ironic uses.

usage: sushy_check.py URL USER PASSWORD SYSTEM AUTH STEP [IMAGE_URL]

AUTH is basic, session or auto (sushy's SessionOrBasicAuth, Ironic's default).
STEP is:
  all    power, boot override, inventory, virtual media insert (left inserted)
  eject  eject the virtual media
  denied expect the credentials to be refused
Prints one JSON object with what sushy saw; the Go test checks it.
"""
import json
import sys

import sushy
from sushy import auth as sushy_auth
from sushy import exceptions


def val(v):
    return getattr(v, 'value', v)


def main():
    url, user, password, system_id, auth_kind, step = sys.argv[1:7]
    image = sys.argv[7] if len(sys.argv) > 7 else None
    auth = {
        'basic': sushy_auth.BasicAuth,
        'session': sushy_auth.SessionAuth,
        'auto': sushy_auth.SessionOrBasicAuth,
    }[auth_kind](username=user, password=password)
    out = {}
    try:
        root = sushy.Sushy(url + '/redfish/v1/', auth=auth)
        system = root.get_system('/redfish/v1/Systems/' + system_id)
    except exceptions.AccessError as e:
        out['access_error'] = e.status_code
        print(json.dumps(out))
        return
    if step == 'denied':
        out['unexpected'] = 'access granted'
        print(json.dumps(out))
        return
    if isinstance(auth, sushy_auth.SessionAuth):
        out['session_uri'] = auth.get_session_resource_id()
        out['session_token'] = auth.get_session_key() is not None

    manager = root.get_manager('/redfish/v1/Managers/' + system_id)
    cd = manager.virtual_media.get_member(
        '/redfish/v1/Managers/%s/VirtualMedia/Cd' % system_id)

    if step == 'eject':
        cd.eject_media()
        cd.refresh()
        out['vmedia'] = {'inserted': cd.inserted, 'image': cd.image}
    elif step == 'all':
        out['power_initial'] = val(system.power_state)
        out['reset_allowed'] = sorted(
            val(v) for v in system.get_allowed_reset_system_values())
        system.reset_system(sushy.ResetType.ON)
        system.refresh()
        out['power_after_on'] = val(system.power_state)
        system.reset_system(sushy.ResetType.FORCE_RESTART)
        system.reset_system(sushy.ResetType.FORCE_OFF)
        system.refresh()
        out['power_after_off'] = val(system.power_state)

        system.set_system_boot_options(
            sushy.BootSource.PXE,
            enabled=sushy.BootSourceOverrideEnabled.ONCE,
            mode=sushy.BootSourceOverrideMode.UEFI)
        system.refresh()
        out['boot'] = {
            'target': val(system.boot.target),
            'enabled': val(system.boot.enabled),
            'mode': val(system.boot.mode),
            'allowed': sorted(val(v) for v in
                              system.get_allowed_system_boot_source_values()),
        }
        system.reset_system(sushy.ResetType.ON)
        system.refresh()
        out['boot_after_on'] = {
            'target': val(system.boot.target),
            'enabled': val(system.boot.enabled),
        }
        system.reset_system(sushy.ResetType.FORCE_OFF)
        try:
            system.set_system_boot_options(sushy.BootSource.PXE,
                                           enabled='Sometimes')
            out['bad_enabled'] = 'accepted'
        except exceptions.InvalidParameterValueError:
            out['bad_enabled'] = 'refused by sushy'

        summary = system.processors.summary
        out['cpus'] = summary.count
        out['cpu_arch'] = val(summary.architecture)
        out['memory_gib'] = system.memory_summary.size_gib
        out['macs'] = sorted(system.ethernet_interfaces.summary)
        out['simple_storage_max_bytes'] = system.simple_storage.max_size_bytes
        out['storage_drive_bytes'] = sorted(
            d.capacity_bytes for s in system.storage.get_members()
            for d in s.drives)
        out['bios'] = dict(system.bios.attributes)

        out['vmedia_before'] = {'inserted': cd.inserted,
                                'media_types': sorted(val(t) for t in cd.media_types)}
        cd.insert_media(image, inserted=True, write_protected=True)
        cd.refresh()
        out['vmedia'] = {'inserted': cd.inserted, 'image': cd.image,
                         'image_name': cd.image_name,
                         'write_protected': cd.write_protected}
    if isinstance(auth, sushy_auth.SessionAuth) and out.get('session_uri'):
        auth.close()
    print(json.dumps(out))


if __name__ == '__main__':
    main()
