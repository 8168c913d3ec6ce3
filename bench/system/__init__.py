"""The benchmarks that run several processes in network namespaces, on the harness the
espd tests use (:mod:`tests.netns`). ``python -m bench.espd`` is the entry point
(:mod:`bench.system.espd`); the modules here are its parts:

- :mod:`~bench.system.topology`: the namespaces, addresses and transforms, and each side's
  setkey file;
- :mod:`~bench.system.procfs`: CPU seconds, drops and the machine's use, from /proc;
- :mod:`~bench.system.processes`: a process with its output collected, and the pair of
  espds measured;
- :mod:`~bench.system.records`: what a TCP run and a side measured;
- :mod:`~bench.system.iperf`: iperf3, and the measured runs through the espds;
- :mod:`~bench.system.anchor`: strongSwan's kernel-libipsec in the same topology;
- :mod:`~bench.system.profile`: an espd under cProfile, its time in stages;
- :mod:`~bench.system.levers`: what would make espd faster, measured;
- :mod:`~bench.system.report`: a transform's result, the table and the JSON file.
"""
