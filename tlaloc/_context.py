"""What the transformations set while they run, held per thread (DESIGN.md invariant 11).

`trace` is the calling thread's context. Each transformation changes it on entry and
restores it on exit, so threads that record, take derivatives and trace `jit` functions at
once never see each other's settings:

  * `retain_graph` > 0 while derivatives are being recorded (grad, jvp, grad_source):
    computed nodes keep their inputs, so the backward pass can walk the graph;
  * `jit_depth` > 0 while tlaloc.jit traces a function without values (nothing can be
    computed; the pending-depth bound must not try);
  * `on_bind` is called with every node recorded while it is set (grad_source's namer).
"""
from __future__ import annotations

import threading


class _TraceContext(threading.local):
    # class attributes: each thread starts from these defaults
    retain_graph = 0
    jit_depth = 0
    on_bind = None


trace = _TraceContext()
