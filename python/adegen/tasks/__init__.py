"""Stage 3: task folders in ade-bench's format. task.yaml, setup/solution scripts and patches
(`taskgen`, `task_yaml`), assertion tests, the GNU patch round trip, atomic output and task ids."""
