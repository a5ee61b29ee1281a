"""The resident broker: one background ``recall`` per user and configuration.

A command that talks to sources (``query``, ``expand``, ``sources``,
``refresh``) first asks the resident broker to run it. The broker is the
``recall serve`` application listening on a Unix socket in a private runtime
folder (:mod:`.place`); it runs the same command code against adapters it
keeps warm and returns the exact bytes and exit code the command would have
produced in process. The thin client (:mod:`.client`) imports only the
standard library, starts the broker when none answers, and falls back to the
in-process path whenever the broker cannot serve: it is an accelerator, never
a dependency.

The broker leaves on its own after an idle period, and refuses to serve (then
leaves, so the next command starts a fresh one) once the configuration files,
the installed version or the adapter programs differ from what it started
with (:mod:`.fingerprint`); between commands it leaves by itself once its
configuration, state folder, socket or installed program changes or goes
(:mod:`.lifeline`). Connections from another user are dropped, and the client
talks only to a broker of its own user (:mod:`.peer`, :mod:`.place`).
:mod:`.roster` finds every broker of the user, for ``recall daemon list`` and
``stop --all``.
"""
