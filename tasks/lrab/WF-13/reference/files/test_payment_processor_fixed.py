"""Regression tests for the remediation: each test pins one audit finding."""

import csv
import hashlib
import logging

import pytest

import payment_processor_fixed as pp

PAN = "4111111111111111"
CVV = "737"
CUSTOMER = {"name": "Ada Example", "email": "ada@example.org", "phone": "+49 30 1234567",
            "address": "Musterweg 1, 10115 Berlin", "date_of_birth": "1990-04-01",
            "marketing_consent": False}
CARD = {"number": PAN, "expiry": "12/29", "cvv": CVV, "holder": "ADA EXAMPLE"}


class FakeGateway:
    def __init__(self, approved=True, fail=False):
        self.approved, self.fail, self.calls = approved, fail, []

    def __call__(self, url, payload, headers):
        self.calls.append((url, dict(payload), dict(headers)))
        if self.fail:
            raise ConnectionError(f"connection reset while sending {payload}")
        return {"approved": self.approved, "reference": "GW-0001"}


@pytest.fixture(autouse=True)
def secrets(monkeypatch):
    monkeypatch.setenv("PAYMENTS_GATEWAY_API_KEY", "test-key-123")
    monkeypatch.setenv("PAYMENTS_FINGERPRINT_KEY", "test-fingerprint-secret")
    monkeypatch.delenv("PAYMENTS_GATEWAY_URL", raising=False)


def all_db_text(processor):
    text = []
    for (table,) in processor.db.execute("SELECT name FROM sqlite_master WHERE type='table'"):
        for row in processor.db.execute(f"SELECT * FROM {table}"):
            text.append(repr(row))
    return "\n".join(text)


def test_card_data_not_stored_and_result_masked(tmp_path):
    gateway = FakeGateway()
    proc = pp.PaymentProcessor(str(tmp_path / "shop.db"), transport=gateway)
    result = proc.charge(CUSTOMER, CARD, 4999)
    assert result["status"] == "approved"
    assert result["card"] == "**** **** **** 1111"
    stored = all_db_text(proc)
    assert PAN not in stored and "'737'" not in stored
    assert "1990-04-01" not in stored  # date of birth no longer collected
    assert "1111" in stored  # last4 kept for support


def test_no_card_data_in_logs(tmp_path, caplog):
    caplog.set_level(logging.DEBUG, logger="payments")
    proc = pp.PaymentProcessor(str(tmp_path / "shop.db"), transport=FakeGateway())
    proc.charge(CUSTOMER, CARD, 4999)
    assert caplog.records, "the processor should still log events"
    assert PAN not in caplog.text and CVV not in caplog.text
    assert "test-key-123" not in caplog.text


def test_gateway_failure_leaks_nothing(tmp_path, caplog):
    caplog.set_level(logging.DEBUG, logger="payments")
    proc = pp.PaymentProcessor(str(tmp_path / "shop.db"), transport=FakeGateway(fail=True))
    with pytest.raises(pp.PaymentError) as info:
        proc.charge(CUSTOMER, CARD, 4999)
    assert PAN not in str(info.value) and PAN not in caplog.text and CVV not in caplog.text


def test_https_and_key_in_header(tmp_path, monkeypatch):
    gateway = FakeGateway()
    proc = pp.PaymentProcessor(str(tmp_path / "shop.db"), transport=gateway)
    proc.charge(CUSTOMER, CARD, 100)
    url, payload, headers = gateway.calls[0]
    assert url.startswith("https://")
    assert headers["Authorization"] == "Bearer test-key-123"
    assert "api_key" not in payload and "customer_email" not in payload
    monkeypatch.setenv("PAYMENTS_GATEWAY_URL", "http://gateway.acquirer-pay.example/v1/charge")
    with pytest.raises(pp.ConfigurationError):
        proc.charge(CUSTOMER, CARD, 100)


def test_missing_secret_is_an_error(tmp_path, monkeypatch):
    monkeypatch.delenv("PAYMENTS_GATEWAY_API_KEY")
    proc = pp.PaymentProcessor(str(tmp_path / "shop.db"), transport=FakeGateway())
    with pytest.raises(pp.ConfigurationError):
        proc.charge(CUSTOMER, CARD, 100)


def test_fingerprint_is_keyed_not_plain_md5():
    fp = pp.PaymentProcessor.fingerprint(PAN)
    assert fp != hashlib.md5(PAN.encode()).hexdigest()
    assert fp != hashlib.sha256(PAN.encode()).hexdigest()
    assert fp == pp.PaymentProcessor.fingerprint("4111 1111 1111 1111")


def test_marketing_export_only_consenting_name_and_email(tmp_path):
    proc = pp.PaymentProcessor(str(tmp_path / "shop.db"), transport=FakeGateway())
    proc.charge(CUSTOMER, CARD, 100)
    proc.charge(dict(CUSTOMER, name="Bo Opt-In", email="bo@example.org",
                     marketing_consent=True), CARD, 200)
    out = tmp_path / "export.csv"
    assert proc.marketing_export(str(out)) == 1
    rows = list(csv.reader(out.open()))
    assert rows == [["name", "email"], ["Bo Opt-In", "bo@example.org"]]


def test_erasure_removes_personal_data(tmp_path):
    proc = pp.PaymentProcessor(str(tmp_path / "shop.db"), transport=FakeGateway())
    cid = proc.charge(CUSTOMER, CARD, 100)["customer_id"]
    proc.delete_customer(cid)
    stored = all_db_text(proc)
    assert "ada@example.org" not in stored and "Ada Example" not in stored
    assert proc.db.execute("SELECT COUNT(*) FROM transactions").fetchone()[0] == 1


def test_retention_anonymises_old_transactions(tmp_path):
    proc = pp.PaymentProcessor(str(tmp_path / "shop.db"), transport=FakeGateway())
    proc.charge(CUSTOMER, CARD, 100)
    far_future = 4102444800.0  # 2100-01-01
    assert proc.purge_expired(now=far_future) == 1
    assert proc.db.execute("SELECT customer_id FROM transactions").fetchone()[0] is None


def test_lookup_is_not_injectable(tmp_path):
    proc = pp.PaymentProcessor(str(tmp_path / "shop.db"), transport=FakeGateway())
    proc.charge(CUSTOMER, CARD, 100)
    assert proc.find_customer("x' OR '1'='1") is None
    assert proc.find_customer("ada@example.org")[2] == "ada@example.org"
