"""The search page ``recall serve`` answers at ``/``: search, coverage and evidence in a browser.

Server-rendered HTML (``templates/``) over the API's broker, with one small
script (``static/page.js``) that adds in-place expansion, the confirmed refresh
and, off loopback, the bearer token kept for the tab. Search and expand work
without the script.
"""
