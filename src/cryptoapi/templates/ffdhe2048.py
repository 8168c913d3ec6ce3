"""The ``ffdhe2048`` template: ``dh`` over RFC 7919's 2048-bit safe-prime group (Appendix A),
as the kernel's ``ffdhe2048(dh)``; see :mod:`cryptoapi.templates._ffdhe`."""

from cryptoapi.templates._ffdhe import template

TEMPLATE = template(2048)
