"""The ``ffdhe8192`` template: ``dh`` over RFC 7919's 8192-bit safe-prime group (Appendix A),
as the kernel's ``ffdhe8192(dh)``; see :mod:`cryptoapi.templates._ffdhe`."""

from cryptoapi.templates._ffdhe import template

TEMPLATE = template(8192)
