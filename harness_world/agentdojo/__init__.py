"""AgentDojo, for AgentDojo users: its suites as worlds, its tasks graded our way and its way.

`data` reads an AgentDojo data folder's suites (environment and injection vectors, filled as
AgentDojo fills them); `source` imports AgentDojo's own task definitions from the folder at run
time (prompts, goals, ground truths, constants: none of that text is in this repository);
`checks` and one module per suite (`banking`, `slack`, `travel`) re-state AgentDojo's utility and
security checks over our state; `importer` makes worlds and tasks; `render` shows a result as
AgentDojo shows it; `regrade` replays AgentDojo's published traces and compares verdicts;
`runs` writes regraded traces as run directories; `live` runs the oracle under AgentDojo's
attacks into run directories; `check` runs each imported task's ground truth as an oracle
beside a do-nothing attempt; `commands` is the ``agentdojo`` command's work.
"""
