"""Print, for each System path given, the health Ironic's redfish
management interface reports (get_node_health over sushy): OK, Warning,
Critical, or None.

usage: sushy_health.py URL USER PASSWORD SYSTEM_PATH...
"""
import sys

import sushy

url, user, password, paths = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
root = sushy.Sushy(url,
                   auth=sushy.auth.BasicAuth(username=user, password=password))
# Ironic's HEALTH_MAP: sushy's three health values, anything else None.
names = {sushy.HEALTH_OK: 'OK', sushy.HEALTH_WARNING: 'Warning',
         sushy.HEALTH_CRITICAL: 'Critical'}
for path in paths:
    system = root.get_system(path)
    health = system.status.health if system.status else None
    print(names.get(health, 'None'))
