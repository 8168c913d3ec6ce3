"""The ``ffdhe6144`` template: ``dh`` over RFC 7919's 6144-bit safe-prime group (Appendix A),
as the kernel's ``ffdhe6144(dh)``; see :mod:`cryptoapi.templates._ffdhe`."""

from cryptoapi.templates._ffdhe import template

TEMPLATE = template(6144)
