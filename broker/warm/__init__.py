"""The warm path: what lets a command skip the broker's start-up, beside the cold one.

A cold command reads ``cli -> command -> app -> plan -> supervise -> adapter``. The
warm path plugs in beside it:

* :mod:`.daemon`: the resident broker, a ``recall serve`` application on a private
  Unix socket that runs command lines against warm adapters, and the thin client
  that hands it a command line (starting one when none answers);
* :mod:`.launch_plan`: the adapters the last cold query of a shape asked, started
  again first thing by the next one;
* :mod:`.prestart`: adapter processes launched ahead of their spawn, held by the
  command that started them until its supervisor adopts them;
* :mod:`.argv_flags`: the flags the thin client and the launch plan read before
  argparse is imported.
"""
