# Stubs of the compiled core, one module per area (python/bindings/*.cpp);
# tests/python/test_stubs.py fails when they drift.
from . import calibrate as calibrate
from . import catalog as catalog
from . import deployment as deployment
from . import memory_plan as memory_plan
from . import moe as moe
from . import recommend as recommend
from . import reports as reports
from . import sweeps as sweeps

__version__: str
