"""What an experiment costs, outside the training path: the cost model (:mod:`.model`, counted FLOPs
and launches), the estimate every chapter prints (:mod:`.estimate`) and the work log that records
what the training loop trained (:mod:`.log`, which importing this package switches on)."""

from deepnotes.cost import log  # noqa: F401  (adds the work log to the training loop's observers)
