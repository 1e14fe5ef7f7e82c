#!/usr/bin/python3
"""Checks policy-table.txt against Ironic's own policy engine.

For every row and persona of the table, what Ironic answers is worked out
from Ironic's policy-in-code (ironic.common.policy, or the policy.py given
with --policy, e.g. master's) evaluated by oslo.policy with enforce_scope
and enforce_new_defaults on, following the order of Ironic's API helpers
(check_node_policy_and_retrieve, check_port_policy_and_retrieve,
check_list_policy, check_owner_policy, authorize_node_link, ...). A cell
must equal that answer, unless it is starred: a starred cell is where ferro
deliberately answers otherwise, and must then differ from it.

    check_policy_table.py [--policy POLICY.py] TABLE       check
    check_policy_table.py [--policy POLICY.py] --fill TABLE print TABLE with
                                                            every '?' cell filled

Exit status 0 when every cell agrees, 1 when one does not, 2 on bad input.
Rules the loaded policy does not have (a newer Ironic's) are reported and
not checked.
"""

import argparse
import importlib.util
import sys

from oslo_config import cfg
from oslo_policy import policy as oslo_policy

PERSONAS = ['an', 'sa', 'sr', 'aA', 'aM', 'aR', 'bA', 'bM', 'bR', 'xA', 'xM', 'xR']
PA, PB = 'project-a', 'project-b'
ROLES = {'A': ['admin', 'member', 'reader'], 'M': ['member', 'reader'], 'R': ['reader']}


def creds(persona):
    """The policy values of a persona's token, as Ironic's context has them."""
    if persona == 'an':
        return None
    if persona[0] == 's':
        roles = ROLES['A'] if persona == 'sa' else ROLES['R']
        c = {'roles': roles, 'system_scope': 'all', 'project_id': None, 'project_name': None}
    else:
        project = PA if persona[0] == 'a' else PB
        c = {'roles': ROLES[persona[1]], 'system_scope': None, 'project_id': project,
             'project_name': project}
    c.update({'user_id': 'u-' + persona, 'domain_id': None, 'is_public_api': False,
              'config.service_project_name': 'service'})
    return c


def node_of(persona):
    """The node a persona's cell is about: columns b* are project b on a
    node of project a that b leases; x* are b on one it does not."""
    if persona[0] == 'x':
        return {'node.owner': PA}
    return {'node.owner': PA, 'node.lessee': PB}


class Unknown(Exception):
    """A rule the loaded policy does not define."""


class Ironic:
    def __init__(self, policies):
        conf = cfg.ConfigOpts()
        conf([], project='policy-table')
        # use_conf loads the registered defaults; no file overrides them.
        self.enforcer = oslo_policy.Enforcer(conf, policy_file='/nonexistent/policy.yaml')
        conf.set_override('enforce_scope', True, group='oslo_policy')
        conf.set_override('enforce_new_defaults', True, group='oslo_policy')
        conf.set_override('policy_dirs', [], group='oslo_policy')
        self.enforcer.register_defaults(policies)
        self.enforcer.load_rules()
        self.names = {p.name for p in policies}

    def allowed(self, rule, c, target):
        """'y', 'deny' or 'scope' (oslo.policy's InvalidScope: Ironic's 500)."""
        if rule not in self.names:
            raise Unknown(rule)
        t = dict(c)
        t.update(target)
        try:
            self.enforcer.authorize(rule, t, dict(c), do_raise=True)
            return 'y'
        except oslo_policy.InvalidScope:
            return 'scope'
        except oslo_policy.PolicyNotAuthorized:
            return 'deny'

    def check(self, rule, c, target):
        """check_policy/check_owner_policy: None when allowed, else the
        answer. A token of a scope the rule does not have is refused too:
        oslo.policy's InvalidScope, which Ironic answers with 500 and ferro
        with 403, counted in self.scope."""
        r = self.allowed(rule, c, target)
        if r == 'scope':
            self.scope += 1
        return None if r == 'y' else '403'

    scope = 0

    def answer(self, kind, rules, persona):
        """What Ironic answers persona for a route of this kind."""
        if kind == 'public':
            return 'y'
        c = creds(persona)
        if c is None:
            return '401'
        node = node_of(persona)
        project = c['project_id']
        first, *more = rules
        fallback = None
        if '||' in first:
            first, fallback = first.split('||')

        def visible(conceal):
            r = self.allowed('baremetal:node:get', c, node)
            if r == 'y':
                return None
            return 'nf' if conceal else '403'

        def with_fallback(fn):
            a = fn(first)
            if a == '403' and fallback:
                return fn(fallback)
            return a

        if kind == 'none':
            return with_fallback(lambda r: self.check(r, c, {})) or 'y'
        if kind == 'list':  # check_list_policy
            obj = first.split(':')[1]
            if self.allowed('baremetal:%s:list_all' % obj, c, {}) == 'y':
                return 'y'
            if not project:
                return '403'
            return self.check(first, c, {}) or 'y'
        if kind in ('node', 'patch'):  # check_(multiple_)node_policies_and_retrieve
            def one(r):
                return visible(bool(project)) or self.check(r, c, node)
            a = with_fallback(one)
            for r in more:
                a = a or self.check(r, c, node)
            return a or 'y'
        if kind in ('port', 'portgroup', 'connector', 'vtarget'):  # check_*_policy_and_retrieve
            return visible(True) or self.check(first, c, node) or 'y'
        if kind in ('nodelist', 'pglist'):  # check_port_list_policy, check_volume_list_policy
            a = visible(True)
            if a:
                return a
            obj = first.split(':')[1]
            if self.allowed('baremetal:%s:list_all' % obj, c, {}) == 'y':
                return 'y'
            if not project:
                return '403'
            return self.check(first, c, {}) or 'y'
        if kind == 'nodealloc':
            # NodeAllocationController: the node must be visible; the
            # fixture's nodes have no allocation, so no allocation rule.
            return visible(True) or 'y'
        if kind == 'allocation':  # check_allocation_policy_and_retrieve
            own = {'allocation.owner': PA}
            if self.allowed('baremetal:allocation:get', c, own) != 'y':
                return 'nf'
            return self.check(first, c, own) or 'y'
        if kind == 'runbook':
            # check_runbook_policy_and_retrieve on a runbook project a owns,
            # not public (so a GET's fallback to public runbooks refuses too).
            return self.check(first, c, {'runbook.owner': PA}) or 'y'
        if kind == 'bodynode':  # check_owner_policy(conceal_node=False) on the body's node
            return self.check(first, c, node) or 'y'
        if kind == 'backfill':  # allocation create with "node": node:get concealed
            return self.check(first, c, {}) or visible(True) or 'y'
        if kind == 'candidates':  # check_node_list(project=...) unless create_restricted
            a = self.check(first, c, {})
            if a:
                return a
            if self.allowed('baremetal:allocation:create_restricted', c, {}) == 'y':
                return 'y'
            return 'y' if project in (node.get('node.owner'), node.get('node.lessee')) else 'nf'
        if kind == 'move':
            # A port/portgroup/volume PATCH of node_uuid to the node of
            # project b (never leased): check_port_policy_and_retrieve on the
            # cell's node, then authorize_node_link: visible, same owner.
            a = visible(True) or self.check(first, c, node)
            if a:
                return a
            return 'nf'  # the owners differ for every caller
        raise ValueError('unknown kind %r' % kind)


def parse(path):
    """Yields (line number, line, row) for each row of the table; row is
    None for comments and blank lines."""
    with open(path) as f:
        for i, line in enumerate(f, 1):
            text = line.rstrip('\n')
            if not text.strip() or text.lstrip().startswith('#'):
                yield i, text, None
                continue
            head, _, body = text.partition(' | ')
            fields = head.split()
            if len(fields) != 5 + len(PERSONAS):
                raise SystemExit('%s:%d: %d fields, want %d' % (path, i, len(fields), 5 + len(PERSONAS)))
            method, route, rules, kind = fields[0], fields[1], fields[2], fields[3]
            cells = fields[4:4 + len(PERSONAS)]
            yield i, text, (method, route, rules.split(','), kind, cells, fields[-1], body.strip())


def load(policy_file):
    if policy_file:
        spec = importlib.util.spec_from_file_location('ironic_policy_under_check', policy_file)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    else:
        from ironic.common import policy as mod
    return list(mod.list_policies())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--policy', help="an Ironic policy.py (default: the installed ironic's)")
    ap.add_argument('--fill', action='store_true')
    ap.add_argument('table')
    a = ap.parse_args()
    ironic = Ironic(load(a.policy))
    bad = 0
    checked = 0
    unknown = set()
    for i, text, row in parse(a.table):
        if row is None:
            if a.fill:
                print(text)
            continue
        method, route, rules, kind, cells, _, _ = row
        out = []
        for persona, cell in zip(PERSONAS, cells):
            try:
                want = ironic.answer(kind, rules, persona)
            except Unknown as e:
                unknown.add(str(e))
                out.append(cell)
                continue
            checked += 1
            if cell == '?':
                out.append(want)
                continue
            starred = cell.endswith('*')
            value = cell.rstrip('*')
            if starred and value == want:
                print('%s:%d: %s %s %s: %s is starred but Ironic answers the same' % (a.table, i, method, route, persona, cell))
                bad += 1
            elif not starred and value != want:
                print('%s:%d: %s %s %s: table says %s, Ironic answers %s' % (a.table, i, method, route, persona, cell, want))
                bad += 1
            out.append(cell)
        if a.fill:
            head, sep, body = text.partition(' | ')
            fields = head.split()
            fields[4:4 + len(PERSONAS)] = out
            line = '%-7s %-52s %-48s %-10s %s %s' % (fields[0], fields[1], fields[2], fields[3],
                                                    ' '.join('%-4s' % c for c in fields[4:4 + len(PERSONAS)]), fields[-1])
            print(line.rstrip() + ((' | ' + body.strip()) if sep else ''))
    if unknown:
        print('not checked, rules this Ironic does not have: %s' % ', '.join(sorted(unknown)), file=sys.stderr)
    print('%d cells checked against Ironic, %d disagree; %d refused for the token\'s scope '
          '(Ironic: 500 InvalidScope, ferro: 403)' % (checked, bad, ironic.scope), file=sys.stderr)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
