package ironic

// Ironic sorts a collection on any column of the resource's database model
// (ironic/db/sqlalchemy/models.py; IronicBase adds created_at, updated_at
// and version to every model) except those the controller's
// invalid_sort_key_list refuses (ironic/api/controllers/v1/<resource>.py:
// "The sort_key value %(key)s is an invalid field for sorting", 400).
// oslo.db refuses any name that is not a column, which _paginate_query in
// ironic/db/sqlalchemy/api.py words 'The sort_key value "%(key)s" is an
// invalid field for sorting' (quoted), 400 as well. The tables below are
// those columns, each with the microversion its field needs (the get_all
// handlers check the sort key like a requested field, 406 below it); a
// version above maxMinor means ferro, which serves no such version, always
// answers 406 as Ironic does at 1.82.
//
// Columns ferro keeps no field for (an allocation's conductor_affinity,
// an inspection rule's scope) are the same on every row, so Ironic's order
// on them is the id order, which the store gives.

// sortColumns maps a sort key to the minimum microversion of its field.
type sortColumns map[string]int

// baseSortColumns are IronicBase's columns plus id and uuid, which every
// resource has.
func baseSortColumns(extra sortColumns) sortColumns {
	m := sortColumns{"id": 0, "uuid": 0, "created_at": 0, "updated_at": 0, "version": 0}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// models.Chassis; ironic/api/controllers/v1/chassis.py refuses extra.
var chassisSortColumns = baseSortColumns(sortColumns{"description": 0})

// models.DeployTemplate; deploy_template.py refuses extra and steps.
var deployTemplateSortColumns = baseSortColumns(sortColumns{"name": 0})

// models.VolumeConnector; volume_connector.py refuses extra.
var volumeConnectorSortColumns = baseSortColumns(sortColumns{"node_id": 0, "type": 0, "connector_id": 0})

// models.VolumeTarget; volume_target.py refuses extra and properties.
var volumeTargetSortColumns = baseSortColumns(sortColumns{
	"node_id": 0, "volume_type": 0, "boot_index": 0, "volume_id": 0,
})

// models.Port; port.py refuses extra, internal_info and
// local_link_connection and gates fields in _check_allowed_port_fields.
var portSortColumns = baseSortColumns(sortColumns{
	"address": 0, "node_id": 0,
	"pxe_enabled":      v19PortAdvancedNet,
	"portgroup_id":     0,
	"physical_network": v34PortPhysicalNetwork,
	"is_smartnic":      v53SmartNIC,
	// MINOR_88_PORT_NAME, MINOR_97_PORT_DESCRIPTION, MINOR_100_PORT_VENDOR,
	// MINOR_101_PORT_CATEGORY, and available_for_dynamic_portgroup with
	// the dynamic portgroups of MINOR_111_DYNAMIC_PORTGROUP.
	"name": 88, "description": 97, "vendor": 100, "category": 101,
	"available_for_dynamic_portgroup": 111,
})

// models.Portgroup; portgroup.py refuses extra, internal_info and
// properties; utils.check_allowed_portgroup_fields gates mode and
// dynamic_portgroup.
var portgroupSortColumns = baseSortColumns(sortColumns{
	"name": 0, "node_id": 0, "address": 0, "standalone_ports_supported": 0,
	"mode": v26PortgroupMode, "physical_network": 0, "category": 0,
	"dynamic_portgroup": 111,
})

// models.Allocation; allocation.py refuses extra, candidate_nodes and traits.
var allocationSortColumns = baseSortColumns(sortColumns{
	"name": 0, "node_id": 0, "state": 0, "owner": 0, "last_error": 0,
	"resource_class": 0, "conductor_affinity": 0,
})

// checkSortColumn answers a sort key that is no column of the resource's
// model as oslo.db does through Ironic, and one whose field is newer than
// the request with 406.
func (rq *request) checkSortColumn(key string, cols sortColumns) error {
	m, ok := cols[key]
	if !ok {
		return badRequest("The sort_key value \"%s\" is an invalid field for sorting", key)
	}
	if rq.minor < m {
		return notAcceptable()
	}
	return nil
}
