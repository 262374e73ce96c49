"""Collect evidence of the findings by running the ORIGINAL module.

The original is imported unchanged inside a scratch folder (it configures a
log file in the current directory at import time) and driven with a fake
gateway, so no network is used.  The printout quotes what ends up in the log
file, the database and the marketing export.

Usage: python evidence_probe.py > evidence_original.txt
"""

import importlib.util
import json
import logging
import os
import sys
import tempfile

SOURCE = os.path.abspath("privacy_audit_source.py")
PAN = "4111111111111111"
CVV = "737"


def fake_gateway(url, payload, headers):
    fake_gateway.seen = (url, dict(payload))
    return {"approved": True, "reference": "GW-0001"}


def main():
    scratch = tempfile.mkdtemp(prefix="probe-")
    os.chdir(scratch)
    spec = importlib.util.spec_from_file_location("original", SOURCE)
    original = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(original)
    proc = original.PaymentProcessor(os.path.join(scratch, "shop.db"), transport=fake_gateway)
    customer = {"name": "Ada Example", "email": "ada@example.org", "phone": "+49 30 1234567",
                "address": "Musterweg 1, 10115 Berlin", "date_of_birth": "1990-04-01"}
    card = {"number": PAN, "expiry": "12/29", "cvv": CVV, "holder": "ADA EXAMPLE"}
    result = proc.charge(customer, card, 4999)
    proc.delete_customer(result["customer_id"])
    proc.marketing_export(os.path.join(scratch, "export.csv"))
    logging.shutdown()

    print("== charge() return value")
    print(json.dumps(result))
    print("== gateway request (url, payload keys)")
    url, payload = fake_gateway.seen
    print(url, sorted(payload))
    print("== payments.log lines containing the card number, the CVV or the date of birth")
    with open(os.path.join(scratch, "payments.log"), encoding="utf-8") as handle:
        for line in handle:
            if PAN in line or "'cvv': '737'" in line or "1990-04-01" in line:
                print(line.rstrip().split(" ", 2)[2])
    print("== cards table")
    for row in proc.db.execute("SELECT number, expiry, cvv, holder, fingerprint FROM cards"):
        print(row)
    print("== customers table after delete_customer()")
    for row in proc.db.execute("SELECT name, email, date_of_birth, deleted FROM customers"):
        print(row)
    print("== marketing export after delete_customer()")
    with open(os.path.join(scratch, "export.csv"), encoding="utf-8") as handle:
        print(handle.read().rstrip())
    print("== find_customer(\"x' OR '1'='1\")")
    row = proc.find_customer("x' OR '1'='1")
    print(row[:6] if row else row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
