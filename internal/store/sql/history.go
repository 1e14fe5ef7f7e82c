package sql

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// AddHistory appends an event to its node's history, giving it a UUID and
// CreatedAt if it has none.
func (db *DB) AddHistory(ctx context.Context, e *baremetal.HistoryEvent) error {
	if e.UUID == "" {
		e.UUID = uuid.NewString()
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = db.stamp()
	}
	e.CreatedAt = normTime(e.CreatedAt)
	body, err := encodeBody(e)
	if err != nil {
		return fmt.Errorf("add history event to node %s: %w", e.NodeUUID, err)
	}
	_, err = db.exec(ctx, "INSERT INTO node_history (uuid, node_uuid, created_at, body) VALUES ($1, $2, $3, $4)",
		e.UUID, e.NodeUUID, db.d.timeArg(e.CreatedAt), body)
	if err != nil {
		return db.writeError(err, "history event", map[string]string{"uuid": e.UUID},
			fmt.Sprintf("node %s could not be found", e.NodeUUID))
	}
	return nil
}

// ListHistory returns a node's history, oldest first. A node without
// history, or no node, has an empty one.
func (db *DB) ListHistory(ctx context.Context, nodeUUID string) ([]*baremetal.HistoryEvent, error) {
	rows, err := db.query(ctx, "SELECT body FROM node_history WHERE node_uuid = $1 ORDER BY created_at, id", nodeUUID)
	if err != nil {
		return nil, fmt.Errorf("list history of node %s: %w", nodeUUID, err)
	}
	events, err := scanAll(rows, func(rows *stdsql.Rows) (*baremetal.HistoryEvent, error) {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return nil, err
		}
		e := new(baremetal.HistoryEvent)
		return e, decodeBody(body, e)
	})
	if err != nil {
		return nil, fmt.Errorf("list history of node %s: %w", nodeUUID, err)
	}
	return events, nil
}

// SaveInventory stores a node's inventory, replacing any previous one,
// which moves to the node's inventory history; the history keeps the
// newest WithInventoryHistory inventories.
func (db *DB) SaveInventory(ctx context.Context, inv *baremetal.Inventory) error {
	inventory, err := encodedOr(inv.EncodedInventory, inv.Inventory)
	if err != nil {
		return fmt.Errorf("save inventory of node %s: %w", inv.NodeUUID, err)
	}
	pluginData, err := encodedOr(inv.EncodedPluginData, inv.PluginData)
	if err != nil {
		return fmt.Errorf("save inventory of node %s: %w", inv.NodeUUID, err)
	}
	save := func(tx *DB) error {
		if db.keepInventories > 0 {
			if _, err := tx.exec(ctx, `INSERT INTO node_inventory_history (node_uuid, saved_at, inventory, plugin_data)
SELECT node_uuid, saved_at, inventory, plugin_data FROM node_inventory WHERE node_uuid = $1`, inv.NodeUUID); err != nil {
				return err
			}
		}
		_, err := tx.exec(ctx, `INSERT INTO node_inventory (node_uuid, inventory, plugin_data, saved_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (node_uuid) DO UPDATE SET inventory = excluded.inventory, plugin_data = excluded.plugin_data, saved_at = excluded.saved_at`,
			inv.NodeUUID, inventory, pluginData, db.d.timeArg(db.stamp()))
		if err != nil {
			return err
		}
		_, err = tx.exec(ctx, `DELETE FROM node_inventory_history WHERE node_uuid = $1 AND id NOT IN
(SELECT id FROM node_inventory_history WHERE node_uuid = $1 ORDER BY id DESC LIMIT $2)`, inv.NodeUUID, db.keepInventories)
		return err
	}
	err = db.InTx(ctx, func(s store.Store) error { return save(s.(*DB)) })
	if err != nil {
		return db.writeError(err, "inventory", nil, fmt.Sprintf("node %s could not be found", inv.NodeUUID))
	}
	return nil
}

// encodedOr is encoded when the caller encoded the value already, else
// the value encoded.
func encodedOr(encoded []byte, v baremetal.JSON) (string, error) {
	if encoded != nil {
		return string(encoded), nil
	}
	return encodeBody(v)
}

// ListInventoryHistory returns the node's previous inventories, newest
// first; the current one (GetInventory) is not among them.
func (db *DB) ListInventoryHistory(ctx context.Context, nodeUUID string) ([]*store.InventoryRecord, error) {
	rows, err := db.query(ctx, `SELECT saved_at, inventory, plugin_data FROM node_inventory_history
WHERE node_uuid = $1 ORDER BY id DESC`, nodeUUID)
	if err != nil {
		return nil, fmt.Errorf("list inventory history of node %s: %w", nodeUUID, err)
	}
	records, err := scanAll(rows, func(rows *stdsql.Rows) (*store.InventoryRecord, error) {
		r := &store.InventoryRecord{Inventory: baremetal.Inventory{NodeUUID: nodeUUID}}
		var inventory, pluginData []byte
		if err := rows.Scan(timeScanner{&r.SavedAt}, &inventory, &pluginData); err != nil {
			return nil, err
		}
		return r, decodeInventory(&r.Inventory, inventory, pluginData)
	})
	if err != nil {
		return nil, fmt.Errorf("list inventory history of node %s: %w", nodeUUID, err)
	}
	return records, nil
}

func decodeInventory(inv *baremetal.Inventory, inventory, pluginData []byte) error {
	if err := decodeBody(inventory, &inv.Inventory); err != nil {
		return err
	}
	if err := decodeBody(pluginData, &inv.PluginData); err != nil {
		return err
	}
	emptyJSON(&inv.Inventory)
	emptyJSON(&inv.PluginData)
	return nil
}

// GetInventory returns the inventory stored for a node.
func (db *DB) GetInventory(ctx context.Context, nodeUUID string) (*baremetal.Inventory, error) {
	var inventory, pluginData []byte
	err := db.queryRow(ctx, "SELECT inventory, plugin_data FROM node_inventory WHERE node_uuid = $1", nodeUUID).
		Scan(&inventory, &pluginData)
	if errors.Is(err, stdsql.ErrNoRows) {
		return nil, notFound("inventory of node %s could not be found", nodeUUID)
	}
	if err != nil {
		return nil, fmt.Errorf("get inventory of node %s: %w", nodeUUID, err)
	}
	inv := &baremetal.Inventory{NodeUUID: nodeUUID}
	if err := decodeInventory(inv, inventory, pluginData); err != nil {
		return nil, err
	}
	return inv, nil
}
