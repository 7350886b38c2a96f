#!/usr/bin/env python3
"""Runs prometheus-xmpp-alerts (PyPI) against the benchmark's Prosody: the same program,
with its XMPP client pointed at 127.0.0.1:PORT and the throwaway CA (it has no setting
for either; it would look up the JID's domain in DNS and trust only the system CAs).

    PXA_HOST=127.0.0.1 PXA_PORT=P PXA_CA=ca.pem pxa_run.py --config xmpp-alerts.yml
"""
import logging
import os
import ssl
import sys

import slixmpp
import prometheus_xmpp.__main__ as pxa

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
HOST, PORT, CA = os.environ["PXA_HOST"], int(os.environ["PXA_PORT"]), os.environ["PXA_CA"]

_init = pxa.XmppApp.__init__


def _patched_init(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    self.ssl_context = ssl.create_default_context(cafile=CA)
    self.enable_direct_tls = False
    self.enable_starttls = True
    self.enable_plaintext = False


def _patched_connect(self, *args, **kwargs):
    return slixmpp.ClientXMPP.connect(self, host=HOST, port=PORT)


pxa.XmppApp.__init__ = _patched_init
pxa.XmppApp.connect = _patched_connect
sys.argv[0] = "prometheus-xmpp-alerts"
pxa.main()
