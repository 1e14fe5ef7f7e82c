"""Drives a Redfish service with sushy (the library Ironic uses) through the
operations ferro's client makes, so that a test can compare the requests.

usage: sushy_shapes.py URL USER PASSWORD SYSTEM MANAGER CD IMAGE
"""
import sys

import sushy
from sushy import auth

url, user, password, system_id, manager_id, cd_id, image = sys.argv[1:8]
conn = sushy.Sushy(url + "/redfish/v1", verify=False,
                   auth=auth.BasicAuth(username=user, password=password))
system = conn.get_system(system_id)
system.reset_system(sushy.ResetType.ON)
system.refresh()
system.set_system_boot_options(sushy.BootSource.CD,
                               enabled=sushy.BootSourceOverrideEnabled.ONCE,
                               mode=sushy.BootSourceOverrideMode.UEFI)
manager = conn.get_manager(manager_id)
vmedia = manager.virtual_media.get_member(cd_id)
vmedia.insert_media(image, inserted=True, write_protected=True)
vmedia.refresh()
vmedia.eject_media()
print("ok")
