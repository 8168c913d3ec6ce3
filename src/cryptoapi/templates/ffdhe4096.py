"""The ``ffdhe4096`` template: ``dh`` over RFC 7919's 4096-bit safe-prime group (Appendix A),
as the kernel's ``ffdhe4096(dh)``; see :mod:`cryptoapi.templates._ffdhe`."""

from cryptoapi.templates._ffdhe import template

TEMPLATE = template(4096)
