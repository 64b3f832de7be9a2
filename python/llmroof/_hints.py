"""The names the functions' annotations use, for ``typing.get_type_hints``
(pydantic, typeguard, sphinx) at run time: ``Unpack`` of ``**options:
Unpack[...]`` and ``pd`` of ``-> pd.DataFrame``, without importing pandas
with llmroof. A module whose annotations name them imports the real ones for
type checkers (``if TYPE_CHECKING``) and these otherwise
(``from ._hints import *``). This module imports nothing of the package."""

from __future__ import annotations

import sys
from typing import Any

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # 3.9 and 3.10: where typing_extensions is installed
    try:
        from typing_extensions import Unpack
    except ImportError:  # pragma: no cover
        pass


class _LazyPandas:
    """``pd`` of the functions' annotations for ``typing.get_type_hints``
    (pydantic, typeguard, sphinx): pandas is imported when a hint naming
    it is resolved, not when llmroof is."""

    def __getattr__(self, name: str) -> Any:
        import pandas

        return getattr(pandas, name)


pd = _LazyPandas()

# Unpack only where this Python has one (as before, a missing one leaves the
# name undefined rather than failing the import).
__all__ = [name for name in ("Unpack", "pd") if name in globals()]
