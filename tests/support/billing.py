"""A one-function change of a billing module: a diff and both sides of the file."""

DIFF = """diff --git a/billing.py b/billing.py
--- a/billing.py
+++ b/billing.py
@@ -1,2 +1,2 @@
 def charge(customer, amount):
-    return gateway.charge(customer.card, amount)
+    return payments_client.capture(customer.card_token, amount)
"""
OLD = b"def charge(customer, amount):\n    return gateway.charge(customer.card, amount)\n"
NEW = (
    b"def charge(customer, amount):\n"
    b"    return payments_client.capture(customer.card_token, amount)\n"
)
