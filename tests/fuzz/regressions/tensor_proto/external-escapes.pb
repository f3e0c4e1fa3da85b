Bej
location../../../etc/passwdj
offset1e3j
length-4p