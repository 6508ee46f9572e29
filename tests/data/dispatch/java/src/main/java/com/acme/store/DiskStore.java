package com.acme.store;

public class DiskStore implements Store {
    public String get(String key) {
        return Files.read(key);
    }
}
