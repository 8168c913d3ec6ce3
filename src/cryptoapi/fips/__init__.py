"""FIPS mode: approved algorithms only, self-tests that cannot be skipped, failure that is
fatal, an integrity self-check and a service indicator (issue 24; docs/fips.md).

Turned on per registry (``Registry(fips=True)``) or for the process (``CRYPTOAPI_FIPS=1``,
``cryptoapi --fips``) before first use; it cannot be turned off in a running registry. The
switch itself (:func:`cryptoapi.selftest.manager.fips_from`) sits beside the self-test
policy's, on the path every registry takes, so that a registry not in FIPS mode imports
nothing of this package; outside FIPS mode only the views (``cryptoapi list``'s
``fips_allowed``) and the service indicator, when read, import from it.

| module | what |
|---|---|
| :mod:`~cryptoapi.fips.approved` | the approved table (Linux 6.12 testmgr.c ``.fips_allowed``) |
| :mod:`~cryptoapi.fips.mode` | what FIPS mode adds to a registry |
| :mod:`~cryptoapi.fips.state` | the error state |
| :mod:`~cryptoapi.fips.conditional` | pairwise consistency, DRBG health and continuous tests |
| :mod:`~cryptoapi.fips.integrity` | ``fips-install`` and the integrity check |
| :mod:`~cryptoapi.fips.indicator` | the service indicator |
"""
