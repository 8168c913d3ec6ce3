"""The ``ffdhe3072`` template: ``dh`` over RFC 7919's 3072-bit safe-prime group (Appendix A),
as the kernel's ``ffdhe3072(dh)``; see :mod:`cryptoapi.templates._ffdhe`."""

from cryptoapi.templates._ffdhe import template

TEMPLATE = template(3072)
