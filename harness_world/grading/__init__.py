"""Grading: tasks, the pure checker, grades, and verification (replay first, then grade)."""

from harness_world.grading.advice import ADVISORIES, Advisory, advise  # advisories
from harness_world.grading.checker import CRITERIA, grade, required_items
from harness_world.grading.criteria import Check, Criterion, CriterionRegistry, Findings
from harness_world.grading.grade import (
    CriterionKind,
    CriterionVerdict,
    Grade,
    GradeState,
    RequiredItem,
    VerdictStatus,
)
from harness_world.grading.layers import (
    JOINT_STATES,
    Admission,
    LayeredResult,
    admit,
    layer_of,
    layered,
    layered_result,
)
from harness_world.grading.rules import FINDINGS
from harness_world.grading.task import (
    Allowance,
    Answer,
    Budgets,
    Clause,
    Condition,
    Requirement,
    Target,
    Task,
    TaskError,
    load_task,
    load_tasks,
    select_targets,
)
from harness_world.grading.taxonomy import DIMENSIONS, SUBDIMENSIONS, Dimension, Taxon
from harness_world.grading.trace import TraceView, trace_view
from harness_world.grading.verifier import (
    FileVerdict,
    Slot,
    SlotResult,
    TrustRoot,
    Verifier,
    WorldRefused,
)
from harness_world.grading.verify import Verification, task_mismatch, verify, verify_file

__all__ = [
    "ADVISORIES",
    "CRITERIA",
    "DIMENSIONS",
    "FINDINGS",
    "JOINT_STATES",
    "SUBDIMENSIONS",
    "Admission",
    "Advisory",
    "Allowance",
    "Answer",
    "Budgets",
    "Check",
    "Clause",
    "Condition",
    "Criterion",
    "CriterionKind",
    "CriterionRegistry",
    "CriterionVerdict",
    "Dimension",
    "FileVerdict",
    "Findings",
    "Grade",
    "GradeState",
    "LayeredResult",
    "RequiredItem",
    "Requirement",
    "Slot",
    "SlotResult",
    "Target",
    "Task",
    "TaskError",
    "Taxon",
    "TraceView",
    "TrustRoot",
    "VerdictStatus",
    "Verification",
    "Verifier",
    "WorldRefused",
    "admit",
    "advise",
    "grade",
    "layer_of",
    "layered",
    "layered_result",
    "load_task",
    "load_tasks",
    "required_items",
    "select_targets",
    "task_mismatch",
    "trace_view",
    "verify",
    "verify_file",
]
