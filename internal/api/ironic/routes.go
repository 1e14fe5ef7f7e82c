package ironic

// routes registers every endpoint. Literal segments (detail, validate)
// take precedence over {node} in ServeMux patterns.
func (s *server) routes() {
	h := s.handle
	h("GET /{$}", s.getRoot)
	h("GET /v1", s.getV1)
	h("GET /v1/{$}", s.getV1)

	// Nodes.
	nodeResource.routes(s)
	h("GET /v1/nodes/validate", s.validateNode)
	h("POST /v1/nodes", s.createNode)
	h("PATCH /v1/nodes/{node}", s.patchNode)
	h("DELETE /v1/nodes/{node}", s.deleteNode)
	h("GET /v1/nodes/{node}/validate", s.validateNode)
	h("GET /v1/nodes/{node}/states", s.getNodeStates)
	h("PUT /v1/nodes/{node}/states/power", s.setPowerState)
	h("PUT /v1/nodes/{node}/states/provision", s.setProvisionState)
	h("PUT /v1/nodes/{node}/states/raid", s.setRAIDConfig)
	h("PUT /v1/nodes/{node}/maintenance", s.setMaintenance)
	h("DELETE /v1/nodes/{node}/maintenance", s.clearMaintenance)
	h("GET /v1/nodes/{node}/management/boot_device", s.getBootDevice)
	h("PUT /v1/nodes/{node}/management/boot_device", s.setBootDevice)
	h("GET /v1/nodes/{node}/management/boot_device/supported", s.supportedBootDevices)
	h("GET /v1/nodes/{node}/traits", s.getTraits)
	h("PUT /v1/nodes/{node}/traits", s.setTraits)
	h("PUT /v1/nodes/{node}/traits/{trait}", s.setTraits)
	h("DELETE /v1/nodes/{node}/traits", s.deleteTraits)
	h("DELETE /v1/nodes/{node}/traits/{trait}", s.deleteTraits)
	h("GET /v1/nodes/{node}/history", s.listHistory)
	h("GET /v1/nodes/{node}/history/{event}", s.getHistoryEvent)
	h("GET /v1/nodes/{node}/inventory", s.getInventory)
	h("GET /v1/nodes/{node}/children", s.getChildren)
	h("GET /v1/nodes/{node}/firmware", s.getFirmware)
	h("GET /v1/nodes/{node}/vmedia", s.getVmedia)
	h("POST /v1/nodes/{node}/vmedia", s.attachVmedia)
	h("DELETE /v1/nodes/{node}/vmedia", s.detachVmedia)
	h("GET /v1/nodes/{node}/states/console", s.getConsole)
	h("PUT /v1/nodes/{node}/states/console", s.setConsole)
	// Ironic's pecan routing also serves the node after the sub-resource.
	h("GET /v1/nodes/states/console/{node}", s.getConsole)
	h("PUT /v1/nodes/states/console/{node}", s.setConsole)
	h("GET /v1/nodes/{node}/bios", s.listBIOS)
	h("GET /v1/nodes/{node}/bios/{setting}", s.getBIOSSetting)
	h("GET /v1/nodes/{node}/vifs", s.listVIFs)
	h("POST /v1/nodes/{node}/vifs", s.attachVIF)
	h("DELETE /v1/nodes/{node}/vifs/{vif}", s.detachVIF)
	h("GET /v1/nodes/{node}/allocation", s.getNodeAllocation)
	h("DELETE /v1/nodes/{node}/allocation", s.deleteNodeAllocation)

	// Ports.
	portResource.routes(s)

	// Portgroups.
	portgroupResource.routes(s)

	// Allocations.
	allocationResource.routes(s)
	h("POST /v1/allocations", s.createAllocation)
	h("PATCH /v1/allocations/{allocation}", s.patchAllocation)
	h("DELETE /v1/allocations/{allocation}", s.deleteAllocation)

	// Drivers, conductors, chassis, shards.
	h("GET /v1/drivers", s.listDrivers)
	h("GET /v1/drivers/{$}", s.listDrivers)
	h("GET /v1/drivers/{driver}", s.getDriver)
	h("GET /v1/drivers/{driver}/properties", s.getDriverProperties)
	h("GET /v1/drivers/{driver}/raid/logical_disk_properties", s.getLogicalDiskProperties)
	h("GET /v1/conductors", s.listConductors)
	h("GET /v1/conductors/{$}", s.listConductors)
	h("GET /v1/conductors/{hostname}", s.getConductor)
	chassisResource.routes(s)
	h("GET /v1/shards", s.listShards)

	// Deploy templates (1.55).
	deployTemplateResource.routes(s)

	// Runbooks (1.92, traits 1.112).
	s.runbookRoutes()

	// Inspection rules (1.96).
	s.inspectionRuleRoutes()

	// Volume connectors and targets (1.32).
	h("GET /v1/volume", s.getVolume)
	h("GET /v1/volume/{$}", s.getVolume)
	h("GET /v1/nodes/{node}/volume", s.getVolume)
	volumeConnectors.routes(s)
	volumeTargets.routes(s)

	// The ramdisk's report (agent inspect interface).
	h("POST /v1/continue_inspection", s.continueInspection)
	// The deploy agent's heartbeat (1.22): checked, never acted on.
	h("POST /v1/heartbeat", s.heartbeat)
	h("POST /v1/heartbeat/{node}", s.heartbeat)
}
