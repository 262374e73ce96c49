"""payment_processor (remediated) - card payments for the ShopLine web shop.

Fixes the findings of audit_report.md (F-numbers in the comments):

- no card data ever reaches the logs, exceptions or return values; only the
  last four digits are shown (F1, F9);
- the security code (CVV) is sent to the gateway once and never stored (F2);
- the full card number is never stored; we keep last4, expiry and a keyed
  HMAC-SHA256 fingerprint for duplicate detection (F3, F4);
- the gateway is reached over HTTPS only, with certificate verification (F5);
- secrets come from the environment, the gateway key travels in a header (F6);
- the marketing export contains name and e-mail of consenting, non-erased
  customers only (F7);
- erasure really deletes personal data and anonymises the bookkeeping records;
  a retention job anonymises old transactions (F8);
- all SQL is parameterised (F10); date of birth is no longer collected and the
  e-mail is not sent to the gateway (F11); the debug dump is gone (F12).

    processor = PaymentProcessor("shop.db")
    result = processor.charge(customer, card, amount_cents=4999, currency="EUR")

Environment: PAYMENTS_GATEWAY_URL (https://...), PAYMENTS_GATEWAY_API_KEY,
PAYMENTS_FINGERPRINT_KEY (secret for the card fingerprint).
"""

import csv
import hashlib
import hmac
import json
import logging
import os
import sqlite3
import ssl
import time
import urllib.request

# A library module must not configure logging (the old basicConfig wrote a
# DEBUG log with card data to the working directory); the application does.
log = logging.getLogger("payments")

DEFAULT_GATEWAY_URL = "https://gateway.acquirer-pay.example/v1/charge"
RETENTION_DAYS = 3650  # bookkeeping obligation: 10 years, then anonymise

SCHEMA = """
CREATE TABLE IF NOT EXISTS customers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL, email TEXT NOT NULL, phone TEXT, address TEXT,
    marketing_consent INTEGER NOT NULL DEFAULT 0, consent_time REAL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS cards (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    customer_id INTEGER NOT NULL, last4 TEXT NOT NULL, expiry TEXT NOT NULL,
    fingerprint TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS transactions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    customer_id INTEGER, card_id INTEGER, amount_cents INTEGER NOT NULL,
    currency TEXT NOT NULL, status TEXT NOT NULL, gateway_reference TEXT,
    created REAL NOT NULL
);
"""


class ConfigurationError(RuntimeError):
    """A required secret or setting is missing or unsafe."""


class PaymentError(RuntimeError):
    """The payment could not be completed; the message never contains card data."""


def mask_pan(number):
    """Display form of a card number: only the last four digits."""
    digits = "".join(ch for ch in str(number) if ch.isdigit())
    return "**** **** **** " + digits[-4:]


def _require_env(name):
    value = os.environ.get(name, "")
    if not value:
        raise ConfigurationError(f"environment variable {name} is not set")
    return value


def gateway_url():
    url = os.environ.get("PAYMENTS_GATEWAY_URL", DEFAULT_GATEWAY_URL)
    if not url.startswith("https://"):
        raise ConfigurationError("the payment gateway must be reached over https://")
    return url


def _default_transport(url, payload, headers):
    """POST JSON over verified TLS and return the decoded JSON answer."""
    context = ssl.create_default_context()  # certificate and host name are checked
    request = urllib.request.Request(url, data=json.dumps(payload).encode(),
                                     headers=headers, method="POST")
    with urllib.request.urlopen(request, context=context, timeout=30) as response:
        return json.loads(response.read().decode())


class PaymentProcessor:
    def __init__(self, db_path, transport=None):
        self.db = sqlite3.connect(db_path)
        self.db.executescript(SCHEMA)
        self.transport = transport or _default_transport

    # -- customers -----------------------------------------------------

    def save_customer(self, customer):
        """Store only what the shop needs to deliver and invoice (no date of birth)."""
        consent = 1 if customer.get("marketing_consent") else 0
        cur = self.db.execute(
            "INSERT INTO customers (name, email, phone, address, marketing_consent,"
            " consent_time, created) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (customer["name"], customer["email"], customer.get("phone", ""),
             customer.get("address", ""), consent, time.time() if consent else None,
             time.time()),
        )
        self.db.commit()
        log.info("new customer id=%s", cur.lastrowid)
        return cur.lastrowid

    def delete_customer(self, customer_id):
        """Erasure request (GDPR Art. 17): remove personal data, keep anonymous bookkeeping."""
        with self.db:
            self.db.execute("UPDATE transactions SET customer_id = NULL, card_id = NULL"
                            " WHERE customer_id = ?", (customer_id,))
            self.db.execute("DELETE FROM cards WHERE customer_id = ?", (customer_id,))
            self.db.execute("DELETE FROM customers WHERE id = ?", (customer_id,))
        log.info("customer id=%s erased", customer_id)

    def find_customer(self, email):
        return self.db.execute(
            "SELECT id, name, email FROM customers WHERE email = ?", (email,)).fetchone()

    def purge_expired(self, now=None, retention_days=RETENTION_DAYS):
        """Anonymise transactions older than the retention period."""
        cutoff = (now if now is not None else time.time()) - retention_days * 86400
        with self.db:
            cur = self.db.execute("UPDATE transactions SET customer_id = NULL, card_id = NULL"
                                  " WHERE created < ? AND customer_id IS NOT NULL", (cutoff,))
        return cur.rowcount

    # -- cards ---------------------------------------------------------

    @staticmethod
    def fingerprint(number):
        """Keyed hash of the card number (a plain hash of a PAN can be brute-forced)."""
        key = _require_env("PAYMENTS_FINGERPRINT_KEY").encode()
        digits = "".join(ch for ch in number if ch.isdigit())
        return hmac.new(key, digits.encode(), hashlib.sha256).hexdigest()

    def save_card(self, customer_id, card):
        """Store a reference to the card: last four digits, expiry, keyed fingerprint."""
        digits = "".join(ch for ch in card["number"] if ch.isdigit())
        cur = self.db.execute(
            "INSERT INTO cards (customer_id, last4, expiry, fingerprint) VALUES (?, ?, ?, ?)",
            (customer_id, digits[-4:], card["expiry"], self.fingerprint(digits)),
        )
        self.db.commit()
        return cur.lastrowid

    # -- payments ------------------------------------------------------

    def charge(self, customer, card, amount_cents, currency="EUR"):
        url = gateway_url()
        api_key = _require_env("PAYMENTS_GATEWAY_API_KEY")
        log.debug("charge request amount=%s %s card=%s", amount_cents, currency,
                  mask_pan(card["number"]))
        customer_id = self.save_customer(customer)
        card_id = self.save_card(customer_id, card)
        payload = {
            "card_number": card["number"],
            "expiry": card["expiry"],
            "cvv": card["cvv"],
            "holder": card["holder"],
            "amount": amount_cents,
            "currency": currency,
        }
        headers = {"Content-Type": "application/json", "Authorization": "Bearer " + api_key}
        try:
            answer = self.transport(url, payload, headers)
        except Exception as exc:
            # Only the exception type: messages from HTTP libraries may echo the request.
            log.error("gateway call failed (%s) for customer id=%s", type(exc).__name__,
                      customer_id)
            raise PaymentError("payment failed: gateway unavailable") from None
        finally:
            payload.clear()  # drop the card data from memory as soon as possible
        status = "approved" if answer.get("approved") else "declined"
        reference = str(answer.get("reference", ""))
        with self.db:
            cur = self.db.execute(
                "INSERT INTO transactions (customer_id, card_id, amount_cents, currency, status,"
                " gateway_reference, created) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (customer_id, card_id, amount_cents, currency, status, reference, time.time()),
            )
        log.info("payment %s transaction id=%s card=%s", status, cur.lastrowid,
                 mask_pan(card["number"]))
        return {"status": status, "card": mask_pan(card["number"]), "customer_id": customer_id,
                "transaction_id": cur.lastrowid}

    # -- reporting -----------------------------------------------------

    def marketing_export(self, path):
        """Newsletter list: name and e-mail of customers who opted in, nothing else."""
        rows = self.db.execute(
            "SELECT name, email FROM customers WHERE marketing_consent = 1 ORDER BY id"
        ).fetchall()
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["name", "email"])
            writer.writerows(rows)
        return len(rows)
