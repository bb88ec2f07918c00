"""Cartpole tasks: balance and swing-up, effort action on the cart."""
