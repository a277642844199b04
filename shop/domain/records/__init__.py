"""The shop's other records (customers, tickets, invoices, estimates, leads) and their in-app activity."""
