"""Stage 1: what the project is. Discovery (`payload`: the dbt package's ade_discover), the project's
facts (`project`), model layers, the clock-reading models, the survey of existing tasks, and the typed
project graph (`graph`)."""
