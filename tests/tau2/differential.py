"""Differential runs: the same call sequences through our tau2_retail world and τ²'s own tools.

Each call is generated well-formed (real ids from the data, chosen so that most writes can
succeed) or ill-formed in one named way (`ILL_FORMED`). Both sides run it; our observation is
rendered as τ² shows it (`Tau2Shape.observation`) and compared with τ²'s tool message; after
the sequence both whole databases are compared by τ²'s hash. In ``tau2`` argument mode, our
side first applies `coerce_call`.

Outcome classes per call: ``same``, ``error_text`` (both refuse, with different texts),
``tau2_only`` (τ² accepts, we refuse), ``ours_only`` (we accept, τ² refuses), ``result``
(both accept, different results); per sequence: ``end_state`` when the databases differ.

Run as a script for the figures quoted in docs/tau2.md::

    PYTHONPATH=. python -m tests.tau2.differential 2000
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import attrs

import harness_world as hw
from harness_world.tau2 import importer
from harness_world.tau2.arguments import ArgumentMode, coerce_call
from harness_world.tau2.faithful import Tau2Hasher, Tau2Shape
from tests.conftest import TAU2_DATA
from tests.tau2.reference import tau2_base_db, tau2_source

ILL_FORMED = (
    "list_as_text",  # coerced in tau2 mode (text_as_list)
    "list_as_empty_object",  # coerced in tau2 mode (object_as_list)
    "summary_not_text",  # coerced in tau2 mode (unread_text)
    "list_as_object",
    "list_of_numbers",
    "text_as_number",
    "text_as_null",
    "missing_argument",
    "extra_argument",
    "unknown_tool",
)
COERCED = frozenset({"list_as_text", "list_as_empty_object", "summary_not_text"})

Pick = Callable[[Sequence[Any]], Any]


@attrs.define
class Pools:
    """Ids from the data, by the shape of call they make succeed."""

    raw: dict[str, Any]
    pending: list[dict[str, Any]]
    delivered: list[dict[str, Any]]
    others: list[dict[str, Any]]
    users: list[dict[str, Any]]
    products: list[dict[str, Any]]

    @classmethod
    def load(cls) -> Pools:
        raw = json.loads((TAU2_DATA / "db.json").read_text())
        orders = list(raw["orders"].values())
        return cls(
            raw=raw,
            pending=[o for o in orders if o["status"] == "pending"][:60],
            delivered=[o for o in orders if o["status"] == "delivered"][:60],
            others=[o for o in orders if o["status"] not in ("pending", "delivered")][:30],
            users=list(raw["users"].values())[:80],
            products=list(raw["products"].values()),
        )


def _methods(pools: Pools, order: dict[str, Any], pick: Pick) -> str:
    user = pools.raw["users"][order["user_id"]]
    options = [*user["payment_methods"], order["payment_history"][0]["payment_method_id"]]
    return str(pick([*options, "credit_card_0000000"]))


def _swaps(pools: Pools, order: dict[str, Any], pick: Pick, n: int) -> tuple[list[str], list[str]]:
    items = order["items"][: max(1, n)]
    new = []
    for item in items:
        variants = list(pools.raw["products"][item["product_id"]]["variants"])
        new.append(str(pick([v for v in variants if v != item["item_id"]] or variants)))
    return [i["item_id"] for i in items], new


def _address(pick: Pick) -> dict[str, str]:
    return {
        "address1": pick(["1 Main St", "22 Élm Road"]),
        "address2": pick(["", "Apt 4"]),
        "city": pick(["Austin", "Zürich"]),
        "state": pick(["TX", "ZH"]),
        "country": pick(["USA", "Switzerland"]),
        "zip": pick(["78701", "8001"]),
    }


def _order_for(pools: Pools, pick: Pick, wanted: str) -> dict[str, Any]:
    group = {"pending": pools.pending, "delivered": pools.delivered}[wanted]
    return dict(pick([*group, *pools.others[:5]]))


def well_formed(pools: Pools, pick: Pick) -> tuple[str, dict[str, Any]]:
    """One well-typed call, likely (not certain) to succeed."""
    tool = pick(
        [
            "find_user_id_by_email",
            "find_user_id_by_name_zip",
            "get_user_details",
            "get_order_details",
            "get_product_details",
            "get_item_details",
            "list_all_product_types",
            "calculate",
            "transfer_to_human_agents",
            "cancel_pending_order",
            "modify_pending_order_address",
            "modify_user_address",
            "modify_pending_order_payment",
            "modify_pending_order_items",
            "exchange_delivered_order_items",
            "return_delivered_order_items",
        ]
    )
    user = pick(pools.users)
    if tool == "find_user_id_by_email":
        return tool, {"email": pick([user["email"], user["email"].upper(), "no@one.com"])}
    if tool == "find_user_id_by_name_zip":
        name = user["name"]
        return tool, {
            "first_name": name["first_name"].lower(),
            "last_name": name["last_name"],
            "zip": pick([user["address"]["zip"], "00000"]),
        }
    if tool == "get_user_details":
        return tool, {"user_id": pick([user["user_id"], "nobody_1"])}
    if tool == "get_order_details":
        return tool, {"order_id": pick([pick(pools.pending)["order_id"], "#W0000000"])}
    if tool == "get_product_details":
        return tool, {"product_id": pick([pick(pools.products)["product_id"], "1"])}
    if tool == "get_item_details":
        product = pick(pools.products)
        return tool, {"item_id": pick([*list(product["variants"])[:2], "42"])}
    if tool == "list_all_product_types":
        return tool, {}
    if tool == "calculate":
        return tool, {"expression": pick(["2 + 2", "10 / 3", "(1.5 - 2) * 4", "1 / 0", "2 x"])}
    if tool == "transfer_to_human_agents":
        return tool, {"summary": pick(["wants a refund", ""])}
    if tool == "cancel_pending_order":
        order = _order_for(pools, pick, "pending")
        reason = pick(["no longer needed", "ordered by mistake", "changed mind"])
        return tool, {"order_id": order["order_id"], "reason": reason}
    if tool == "modify_pending_order_address":
        order = _order_for(pools, pick, "pending")
        return tool, {"order_id": order["order_id"], **_address(pick)}
    if tool == "modify_user_address":
        return tool, {"user_id": user["user_id"], **_address(pick)}
    if tool == "modify_pending_order_payment":
        order = _order_for(pools, pick, "pending")
        return tool, {
            "order_id": order["order_id"],
            "payment_method_id": _methods(pools, order, pick),
        }
    order = _order_for(pools, pick, "delivered" if "delivered" in tool else "pending")
    olds, news = _swaps(pools, order, pick, pick([1, 1, 2]))
    args: dict[str, Any] = {"order_id": order["order_id"], "item_ids": olds}
    if tool != "return_delivered_order_items":
        args["new_item_ids"] = news
    args["payment_method_id"] = _methods(pools, order, pick)
    return tool, args


_LISTS = {"item_ids", "new_item_ids"}


def ill_formed(pools: Pools, pick: Pick) -> tuple[str, dict[str, Any], str]:
    """One call made ill-formed in a named way (some ways need a tool of a certain shape)."""
    how = pick(ILL_FORMED)
    if how == "unknown_tool":
        return pick(["refund_order", "get_orders"]), {"order_id": "#W0000000"}, how
    if how == "summary_not_text":
        return "transfer_to_human_agents", {"summary": pick([1, None, [1], {"a": 1}, True])}, how
    while True:
        tool, args = well_formed(pools, pick)
        lists = sorted(_LISTS & set(args))
        texts = sorted(k for k, v in args.items() if isinstance(v, str))
        if how.startswith("list") and not lists:
            continue
        if how in ("text_as_number", "text_as_null") and not texts:
            continue
        if how == "missing_argument" and not args:
            continue
        break
    bad = dict(args)
    if how == "list_as_text":
        bad[pick(lists)] = pick(["", "abc", args[lists[0]][0]])
    elif how == "list_as_empty_object":
        for name in lists:  # both lists empty, so that the pairs still match
            bad[name] = {}
    elif how == "list_as_object":
        bad[pick(lists)] = {args[lists[0]][0]: 1}
    elif how == "list_of_numbers":
        bad[pick(lists)] = [1, 2]
    elif how == "text_as_number":
        name = pick(texts)
        bad[name] = int(args[name]) if args[name].isdigit() else 7
    elif how == "text_as_null":
        bad[pick(texts)] = None
    elif how == "missing_argument":
        del bad[pick(sorted(args))]
    elif how == "extra_argument":
        bad["note"] = "please"
    return tool, bad, how


def calls(pools: Pools, pick: Pick, length: int, ill_share: float) -> list[tuple[str, Any, str]]:
    """A sequence of calls, each labelled ``well`` or with its ill-formed class."""
    out: list[tuple[str, Any, str]] = []
    for _ in range(length):
        if pick(range(100)) < ill_share * 100:
            out.append(ill_formed(pools, pick))
        else:
            tool, args = well_formed(pools, pick)
            out.append((tool, args, "well"))
    return out


@attrs.define
class Differential:
    """Both sides, reused across sequences (τ²'s touched rows are restored after each)."""

    world: hw.World
    shape: Tau2Shape
    hasher: Tau2Hasher
    env: Any
    start_hash: str
    counts: Counter[tuple[str, str, str]] = attrs.field(factory=Counter)

    @classmethod
    def create(cls) -> Differential:
        world = importer.load_world(TAU2_DATA)
        shape = Tau2Shape.from_data(world, TAU2_DATA / "db.json")
        env = tau2_source().environment(tau2_base_db().model_copy(deep=True))  # type: ignore[attr-defined]
        return cls(world, shape, Tau2Hasher(shape), env, env.get_db_hash())

    def _restore(self, sequence: list[tuple[str, Any, str]]) -> None:
        base: Any = tau2_base_db()
        db = self.env.tools.db
        orders = {
            v
            for _t, a, _l in sequence
            if isinstance(a, dict)
            for v in a.values()
            if isinstance(v, str) and v in base.orders
        }
        users = {
            v
            for _t, a, _l in sequence
            if isinstance(a, dict)
            for v in a.values()
            if isinstance(v, str) and v in base.users
        }
        users |= {base.orders[o].user_id for o in orders}
        for key in orders:
            db.orders[key] = base.orders[key].model_copy(deep=True)
        for key in users:
            db.users[key] = base.users[key].model_copy(deep=True)

    def run(
        self, sequence: list[tuple[str, Any, str]], mode: ArgumentMode, check_restore: bool = True
    ) -> tuple[list[str], bool]:
        """Run a sequence on both sides; per call its outcome class, and whether the end
        states are equal. Counts go to ``counts`` by (mode, label, outcome)."""
        source = tau2_source()
        session = self.world.open_session()
        outcomes = []
        for i, (tool, args, label) in enumerate(sequence):
            message = source.call(self.env, tool, args, str(i))
            used = coerce_call(self.world, tool, args)[0] if mode == "tau2" else args
            observation = session.call(tool, used)
            outcome = _outcome(self.shape.observation(observation), observation.ok, message)
            outcomes.append(outcome)
            self.counts[(mode, label, outcome)] += 1
        same_state = self.hasher.hash(session.touched()) == self.env.get_db_hash()
        self.counts[(mode, "sequence", "same_state" if same_state else "end_state")] += 1
        self._restore(sequence)
        if check_restore:
            assert self.env.get_db_hash() == self.start_hash, "τ²'s database was not restored"
        return outcomes, same_state


def _outcome(ours: str, ours_ok: bool, message: Any) -> str:
    if ours == message.content and ours_ok == (not message.error):
        return "same"
    if not ours_ok and message.error:
        return "error_text"
    if not ours_ok:
        return "tau2_only"
    if message.error:
        return "ours_only"
    return "result"


def main(argv: list[str]) -> None:
    """Run N random sequences in both modes and print the counts (one JSON object last)."""
    n = int(argv[0]) if argv else 500
    rng = random.Random(17)
    pools = Pools.load()
    diff = Differential.create()
    for _ in range(n):
        sequence = calls(pools, rng.choice, rng.randint(1, 8), 0.3)
        for mode in ("strict", "tau2"):
            diff.run(sequence, mode, check_restore=False)
    assert diff.env.get_db_hash() == diff.start_hash
    table: dict[str, dict[str, dict[str, int]]] = {}
    for (mode, label, outcome), count in sorted(diff.counts.items()):
        table.setdefault(mode, {}).setdefault(label, {})[outcome] = count
    for mode, labels in table.items():
        print(mode)
        for label, outcomes in labels.items():
            print(f"  {label:<22} {outcomes}")
    print(json.dumps({"sequences": n, "counts": table}))


if __name__ == "__main__":
    main(sys.argv[1:])
