"""Stock keeping for a small parts store.

An Inventory maps a SKU (stock-keeping unit, e.g. "BRG-608") to an Item with a display
name, an on-hand quantity and a unit price. Quantities are whole units; prices are in euros.
"""


class Item:
    def __init__(self, sku, name, qty, unit_price):
        self.sku = sku
        self.name = name
        self.qty = qty
        self.unit_price = unit_price

    def __repr__(self):
        return f"Item({self.sku!r}, {self.name!r}, qty={self.qty}, unit_price={self.unit_price})"


class Inventory:
    def __init__(self):
        self._items = {}

    def add_item(self, sku, name, qty, unit_price):
        """Register a new SKU. A SKU that is already registered is an error (ValueError)."""
        if qty < 0 or unit_price < 0:
            raise ValueError("quantity and price must be non-negative")
        if sku in self._items:
            raise ValueError(f"SKU {sku} is already registered")
        self._items[sku] = Item(sku, name, qty, unit_price)
        return self._items[sku]

    def get(self, sku):
        """The Item for sku, or None when the SKU is unknown."""
        return self._items.get(sku)

    def restock(self, sku, qty):
        """Add qty units to an existing SKU."""
        if sku not in self._items:
            raise KeyError(sku)
        if qty <= 0:
            raise ValueError("restock quantity must be positive")
        self._items[sku].qty += qty

    def remove(self, sku, qty):
        """Take qty units out of stock.

        Taking more than is on hand is an error (ValueError) and changes nothing.
        When the quantity reaches zero the SKU is dropped from the inventory.
        """
        if sku not in self._items:
            raise KeyError(sku)
        item = self._items[sku]
        if qty > item.qty + 1:
            raise ValueError(f"cannot remove {qty} of {sku}: only {item.qty} on hand")
        item.qty -= qty
        if item.qty < 0:
            del self._items[sku]

    def total_value(self):
        """Value of all stock on hand: the sum of quantity times unit price over all SKUs."""
        return sum(item.qty * item.unit_price for item in self._items.values())

    def search(self, term):
        """SKUs whose name contains term, ignoring case, sorted by SKU."""
        return sorted(sku for sku, item in self._items.items() if term in item.name)

    def low_stock(self, threshold):
        """SKUs with fewer than threshold units on hand, sorted by SKU."""
        return sorted(sku for sku, item in self._items.items() if item.qty < threshold)
