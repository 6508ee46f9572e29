# frozen_string_literal: true

require "json"

module Payments
  # A charge against a card.
  class Charge < ApplicationRecord
    belongs_to :customer

    def self.for_customer(customer)
      where(customer: customer).order(:created_at)
    end

    class << self
      def recent
        for_customer(nil).limit(10)
      end
    end

    def refund!(reason:)
      Refund.create!(charge: self, reason: reason)
      update!(refunded: true)
    end

    private

    def amount_in_dollars
      amount_cents / 100.0
    end
  end
end
