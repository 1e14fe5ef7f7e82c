package inspector

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/store"
)

// MaxReportDepth is the deepest JSON nesting a report may have (OSSN-0099).
const MaxReportDepth = inspection.MaxReportDepth

// Continue processes a report the agent posted to /v1/continue and returns
// the UUID of the node it belongs to. token is the X-Ferro-Inspection-Token
// header ("" when absent); the report's inspection_token field counts too.
// A report rejected before processing (malformed, unknown or ambiguous node,
// wrong token, node not waiting) changes nothing.
func (s *Service) Continue(ctx context.Context, body []byte, token string) (string, error) {
	rep, err := inspection.Decode(body)
	if err != nil {
		return "", errorf(http.StatusBadRequest, "Invalid introspection data: %v", err)
	}
	// Failures of the before-processing hooks (ramdisk_error) are deferred
	// until the node is known, so its introspection can be marked failed.
	run := s.pipe.Start(ctx, rep, "")

	nodeUUID, err := s.lookup(ctx, rep.Typed)
	if err != nil {
		return "", err
	}
	unlock := s.lockNode(nodeUUID)
	defer unlock()
	// Read under the lock: a concurrent report for the same node may have won.
	in, err := s.store.GetIntrospection(ctx, nodeUUID)
	if err != nil {
		return "", err
	}
	if in.FinishedAt != nil || !slices.Contains([]string{StateStarting, StateWaiting}, in.State) {
		return "", errorf(http.StatusBadRequest, "Node %s is not waiting for introspection (state %q)", in.NodeUUID, in.State)
	}
	if token == "" {
		token = rep.Typed.InspectionToken
	}
	if !tokenMatches(in.TokenHash, token) {
		s.log.Warn("report rejected: inspection token mismatch", "node", in.NodeUUID)
		return "", errorf(http.StatusForbidden, "Invalid or missing inspection token for node %s", in.NodeUUID)
	}
	if in.TokenHash != nil && s.o.TokenLifetime > 0 && s.now().Sub(in.StartedAt) > s.o.TokenLifetime {
		// Worded as a wrong token: the sender learns nothing of the node.
		s.log.Warn("report rejected: the inspection token has expired", "node", in.NodeUUID,
			"started_at", in.StartedAt, "token_lifetime", s.o.TokenLifetime)
		return "", errorf(http.StatusForbidden, "Invalid or missing inspection token for node %s", in.NodeUUID)
	}

	// The raw report and the move to processing are one write, and a
	// compare-and-swap: another inspector process may have taken the same
	// node's report (the agent retries) since we read it.
	from := in.State
	in.State, in.UpdatedAt = StateProcessing, s.now().UTC()
	var reports []store.IntrospectionData
	if s.o.StoreData {
		reports = append(reports, store.IntrospectionData{Kind: "raw", Data: withoutLogs(body)})
	}
	if err := s.store.SaveIntrospectionFrom(ctx, in, []string{from}, reports...); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return "", errorf(http.StatusBadRequest, "Node %s is not waiting for introspection (another report for it is being processed)", in.NodeUUID)
		}
		return "", err
	}
	s.progress.Record(context.WithoutCancel(ctx), in.NodeUUID, driver.PhaseReport, reportDetail(rep.Typed))
	if err := s.processReport(ctx, in, rep, run); err != nil {
		return "", err
	}
	return in.NodeUUID, nil
}

// processReport processes a report whose introspection is in processing
// (its raw report stored), to the introspection's end: the rest of
// Continue, and what recovery runs after a crash. The error is what the
// agent is answered.
func (s *Service) processReport(ctx context.Context, in *store.Introspection, rep *inspection.Report, run *inspection.Run) error {
	if preErr := run.Err(); preErr != nil {
		// As upstream: the introspection's error is the failures, the
		// answer adds what they are.
		failures := preErr.Error()
		s.finish(ctx, in, failures)
		s.storeRamdiskLogs(rep.Typed, in.NodeUUID)
		return errorf(http.StatusBadRequest, "The following failures happened during running pre-processing hooks:\n%s", failures)
	}
	processed, err := s.process(ctx, in.NodeUUID, run)
	if err == nil {
		err = s.finishProcessed(ctx, in, processed)
	}
	if err != nil {
		s.finish(ctx, in, err.Error())
		s.storeRamdiskLogs(rep.Typed, in.NodeUUID)
		var e *Error
		if errors.As(err, &e) {
			return err
		}
		return errorf(http.StatusBadRequest, "%s", err.Error())
	}
	s.progress.Record(context.WithoutCancel(ctx), in.NodeUUID, driver.PhaseProcessed, "")
	if s.o.AlwaysStoreRamdiskLogs {
		s.storeRamdiskLogs(rep.Typed, in.NodeUUID)
	}
	return nil
}

// reportDetail says, for the node's history, what sent the report.
func reportDetail(rep *inventory.Report) string {
	var names []string
	if rep.Configuration != nil {
		for _, m := range rep.Configuration.Managers {
			names = append(names, m.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "hardware managers: " + strings.Join(names, ", ")
}

// process runs the hooks and the rules on the node, applies the plan
// through the bare metal API and returns the processed data to store,
// encoded (nil when [processing]store_data is none); the caller stores it
// with the introspection's end (finishProcessed).
func (s *Service) process(ctx context.Context, nodeUUID string, run *inspection.Run) ([]byte, error) {
	n, ports, err := s.bm.Node(ctx, nodeUUID)
	if err != nil {
		return nil, fmt.Errorf("get node %s: %w", nodeUUID, err)
	}
	res, err := run.Finish(ctx, inspection.Target{Node: n, Ports: ports, Previous: func(ctx context.Context) (*inspection.Previous, error) {
		prev, err := s.bm.Previous(ctx, n.UUID)
		if err != nil {
			// The report is processed either way; the rules see no changes.
			s.log.Warn("cannot read the previous inventory", "node", n.UUID, "error", err)
			return nil, nil
		}
		return prev, nil
	}})
	if err != nil {
		return nil, err
	}
	for _, uuid := range res.Rules {
		s.log.Info("introspection rule applied", "node", nodeUUID, "rule", uuid)
	}
	if err := s.bm.Apply(ctx, nodeUUID, res.Changes); err != nil {
		return nil, fmt.Errorf("update node %s: %w", nodeUUID, err)
	}
	if !s.o.StoreData {
		return nil, nil
	}
	b, err := inspection.Marshal(res.Processed())
	if err != nil {
		return nil, fmt.Errorf("encode processed data: %w", err)
	}
	return b, nil
}

// lookup finds the node whose introspection a report belongs to by its MACs
// and BMC addresses: the record matching the most attributes wins; a tie or
// no match is an error, as upstream.
func (s *Service) lookup(ctx context.Context, rep *inventory.Report) (string, error) {
	var macs, bmcs []string
	if rep.Inventory != nil {
		macs = rep.Inventory.MACs()
		bmcs = rep.Inventory.BMCAddresses()
	}
	if len(macs) == 0 && len(bmcs) == 0 {
		return "", errorf(http.StatusBadRequest, "No lookup attributes were found in the introspection data: no valid MAC or BMC address")
	}
	matches, err := s.store.LookupIntrospections(ctx, macs, bmcs)
	if err != nil {
		return "", fmt.Errorf("look up node: %w", err)
	}
	// Best match first; the store returns them by node UUID, so ties are
	// named in a stable order.
	slices.SortStableFunc(matches, func(a, b store.IntrospectionMatch) int { return b.Matches - a.Matches })
	// Only introspections that have not finished take part, as upstream's node cache.
	ended := slices.Clone(matches)
	matches = slices.DeleteFunc(matches, func(m store.IntrospectionMatch) bool { return m.Finished })
	if len(matches) == 0 {
		if len(ended) > 0 {
			// A late or repeated report for a node whose introspection ended.
			in, err := s.store.GetIntrospection(ctx, ended[0].NodeUUID)
			if err != nil {
				return "", err
			}
			return "", errorf(http.StatusBadRequest, "Node %s is not waiting for introspection (state %q)", in.NodeUUID, in.State)
		}
		return "", lookupError("Could not find a node for attributes %s", lookupAttributes(bmcs, macs))
	}
	if len(matches) > 1 && matches[0].Matches == matches[1].Matches {
		var ids []string
		for _, m := range matches {
			if m.Matches == matches[0].Matches {
				ids = append(ids, m.NodeUUID)
			}
		}
		return "", lookupError("Multiple nodes match the same number of attributes %s: %s", lookupAttributes(bmcs, macs), pyList(ids))
	}
	return matches[0].NodeUUID, nil
}

// tokenMatches compares the presented token with the stored hash in
// constant time. An introspection started without a token accepts any report.
func tokenMatches(hash []byte, token string) bool {
	if hash == nil {
		return true
	}
	if token == "" {
		return false
	}
	h := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(h[:], hash) == 1
}

// Reapply re-runs processing on the stored raw data of a finished introspection.
func (s *Service) Reapply(ctx context.Context, ident string) error {
	uuid, err := s.resolve(ctx, ident)
	if err != nil {
		return err
	}
	if !s.o.StoreData {
		return errorf(http.StatusBadRequest, "Inspector is not configured to store introspection data; reapply is not possible")
	}
	unlock := s.lockNode(uuid)
	defer unlock()
	in, err := s.store.GetIntrospection(ctx, uuid)
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Introspection for node %s not found", ident)
	}
	if err != nil {
		return err
	}
	if slices.Contains(activeStates, in.State) {
		return errorf(http.StatusConflict, "Node %s introspection is still running (state %q)", uuid, in.State)
	}
	body, err := s.store.GetIntrospectionData(ctx, uuid, "raw")
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "No unprocessed data is stored for node %s", uuid)
	}
	if err != nil {
		return err
	}
	rep, err := inspection.Decode(body)
	if err != nil {
		return errorf(http.StatusBadRequest, "stored data for node %s does not decode: %v", uuid, err)
	}
	in.State, in.FinishedAt, in.Error, in.UpdatedAt = StateReapplying, nil, "", s.now().UTC()
	in.ManageBoot = false // a reapply never touches power
	if err := s.store.SaveIntrospection(ctx, in); err != nil {
		return err
	}
	run := s.pipe.Start(ctx, rep, uuid)
	if err := run.Err(); err != nil {
		s.finish(ctx, in, "Pre-processing failures detected reapplying introspection on stored data:\n"+err.Error())
		return nil
	}
	processed, err := s.process(ctx, uuid, run)
	if err == nil {
		err = s.finishProcessed(ctx, in, processed)
	}
	if err != nil {
		s.finish(ctx, in, err.Error())
	}
	return nil
}
