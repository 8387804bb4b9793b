"""Storage addresses: parsing a saver URL, showing it without its password.

One URL (``postgresql://``, ``redis://``, ``rediss://``, ``unix://`` or a libpq
keyword DSN) names the storage and the saver's own options (``?schema=``,
``?prefix=``). The command line and the demo read addresses through this module;
the savers' ``from_conn_string`` reads its URL with the same parser.
"""

from langgraph_durable.checkpointers._url_options import (
    MASK,
    NAMESPACE,
    StorageAddress,
    parse_address,
    redact_url,
    with_saver_option,
)

__all__ = [
    "MASK",
    "NAMESPACE",
    "StorageAddress",
    "parse_address",
    "redact_url",
    "with_saver_option",
]
