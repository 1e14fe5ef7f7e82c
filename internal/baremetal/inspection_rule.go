package baremetal

import "time"

// InspectionRule is an inspection rule of the bare metal API (1.96), as
// stored: conditions and actions as the API received them (after
// validation; package inspection/rules parses them).
type InspectionRule struct {
	UUID        string           `json:"uuid"`
	Description *string          `json:"description"`
	Priority    int              `json:"priority"`
	Sensitive   bool             `json:"sensitive"`
	Phase       string           `json:"phase"`
	Conditions  []map[string]any `json:"conditions"`
	Actions     []map[string]any `json:"actions"`
	CreatedAt   time.Time        `json:"created_at"`
	UpdatedAt   *time.Time       `json:"updated_at,omitempty"`
}
